// Command fencing shows why a lock alone does not protect a resource, and
// how fencing tokens do. A small storage service runs on loopback; two
// clients take turns at one lock. Client 1 acquires the lock and pauses
// past its TTL (a GC pause, say); client 2 acquires it and writes; client 1
// wakes, still believing it holds the lock, and writes. The scenario runs
// twice: without a guard, client 1's stale write lands over client 2's;
// with fencing.Middleware in front of the store, it is refused with 409.
//
//	go run ./examples/fencing                       # the memory driver
//	go run ./examples/fencing -driver goredis -dsn 'redis://127.0.0.1:7001?fencing=true,redis://127.0.0.1:7002,...'
//	go run ./examples/fencing -driver postgres -dsn 'postgres://postgres@127.0.0.1:15432/distlock?sslmode=disable'
//
// The driver must issue fencing tokens (for Redlock, fencing=true).
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/distlock/lock"
	_ "github.com/distlock/lock/drivers/goredis"
	_ "github.com/distlock/lock/drivers/memory"
	_ "github.com/distlock/lock/drivers/mongodb"
	_ "github.com/distlock/lock/drivers/postgres"
	_ "github.com/distlock/lock/drivers/redigo"
	"github.com/distlock/lock/fencing"
)

func main() {
	driverName := flag.String("driver", "memory", "the lock driver: "+strings.Join(lock.Drivers(), ", "))
	dsn := flag.String("dsn", "fencing-example", "the driver's DSN (a store name, for memory)")
	ttl := flag.Duration("ttl", 500*time.Millisecond, "the locks' TTL; client 1 pauses for 1.5 times it")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, *driverName, *dsn, *ttl); err != nil {
		fmt.Fprintln(os.Stderr, "fencing:", err)
		os.Exit(1)
	}
}

// run runs the scenario without and with the guard, and fails unless the
// stale write landed without it and was refused with it.
func run(ctx context.Context, w io.Writer, driverName, dsn string, ttl time.Duration) error {
	fmt.Fprintf(w, "driver %s, TTL %v\n", driverName, ttl)
	for _, guarded := range []bool{false, true} {
		landed, err := scenario(ctx, w, driverName, dsn, ttl, guarded)
		switch {
		case err != nil:
			return err
		case landed && guarded:
			return errors.New("the guard let the stale write through")
		case !landed && !guarded:
			return errors.New("without a guard, the stale write did not land")
		}
	}
	return nil
}

// scenario runs the two clients against a fresh store, and reports whether
// client 1's stale write landed.
func scenario(ctx context.Context, w io.Writer, driverName, dsn string, ttl time.Duration, guarded bool) (landed bool, _ error) {
	if guarded {
		fmt.Fprintln(w, "\nwith the guard (fencing.Middleware in front of the store):")
	} else {
		fmt.Fprintln(w, "\nwithout a guard:")
	}
	st := &store{docs: make(map[string]string)}
	url, stop, err := st.serve(guarded)
	if err != nil {
		return false, err
	}
	defer stop()
	key := "fencing-example/" + randomSuffix()
	c1, err := lock.Open(driverName, dsn)
	if err != nil {
		return false, err
	}
	defer c1.Close()
	c2, err := lock.Open(driverName, dsn)
	if err != nil {
		return false, err
	}
	defer c2.Close()

	l1, tok1, err := acquire(ctx, c1, key, ttl)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(w, "  client 1 acquires %q: token %v\n", key, tok1)
	pause := ttl * 3 / 2
	fmt.Fprintf(w, "  client 1 pauses for %v, past its TTL\n", pause)
	time.Sleep(pause)

	l2, tok2, err := acquire(ctx, c2, key, ttl)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(w, "  client 2 acquires it: token %v; writes: %s\n", tok2, put(ctx, url, tok2, "client 2's report"))
	fmt.Fprintf(w, "  client 1 wakes, still believing it holds the lock, and writes: %s\n", put(ctx, url, tok1, "client 1's stale report"))
	l2.Release(ctx)
	l1.Release(ctx) // not held any more: client 2 took the key

	got := st.get("/report")
	landed = got == "client 1's stale report"
	if landed {
		fmt.Fprintf(w, "  the store holds %q: the stale write landed over client 2's\n", got)
	} else {
		fmt.Fprintf(w, "  the store holds %q: the stale write was refused\n", got)
	}
	return landed, nil
}

// acquire takes key for ttl and returns the lock and its token.
func acquire(ctx context.Context, c *lock.Client, key string, ttl time.Duration) (*lock.Lock, fencing.Token, error) {
	l, err := c.Acquire(ctx, key, lock.WithTTL(ttl))
	if err != nil {
		return nil, 0, err
	}
	tok, ok := l.Token()
	if !ok {
		l.Release(ctx)
		return nil, 0, errors.New("the driver issues no fencing tokens (for Redlock, add fencing=true to the DSN)")
	}
	return l, tok, nil
}

var client = &http.Client{Transport: fencing.Transport(nil), Timeout: 10 * time.Second}

// put writes doc to the store's /report with tok, and returns the answer's
// status line.
func put(ctx context.Context, url string, tok fencing.Token, doc string) string {
	req, err := http.NewRequestWithContext(fencing.NewContext(ctx, tok), http.MethodPut, url+"/report", strings.NewReader(doc))
	if err != nil {
		return err.Error()
	}
	resp, err := client.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Sprintf("%s (%s)", resp.Status, strings.TrimSpace(string(body)))
	}
	return resp.Status
}

// store is the protected resource: documents by path, written with PUT.
type store struct {
	mu   sync.Mutex
	docs map[string]string
}

func (s *store) get(path string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.docs[path]
}

func (s *store) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPut {
		http.Error(w, "PUT only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.docs[r.URL.Path] = string(body)
	s.mu.Unlock()
	w.WriteHeader(http.StatusCreated)
}

// serve serves the store on a loopback port, behind the guard if guarded,
// and returns its URL and a function that stops it.
func (s *store) serve(guarded bool) (url string, stop func(), _ error) {
	var h http.Handler = s
	if guarded {
		guard := fencing.NewMemoryGuard()
		h = fencing.Middleware(guard, func(r *http.Request) string { return r.URL.Path })(s)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

func randomSuffix() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
