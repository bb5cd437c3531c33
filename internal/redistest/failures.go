package redistest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/redlock"
	"github.com/distlock/lock/internal/testenv"
)

// A DSN of five nodes that all refuse the client for a reason retrying
// cannot fix ends a waiting Acquire without a deadline within 3s, with
// an error that matches ErrMisconfigured, never quotes a password, and
// leaves no warning (no cleanup is sent to nodes that refused it). It
// usually ends in 2-155ms; a client that retried would go on to the 20s
// the test gives it. The bound was a second until redigo's five TLS
// handshakes to servers it does not trust took 1.4s under -race beside
// other packages' tests (make test, 2026-12-08).
// MisconfiguredEndsAtOnce checks it for the Redlock driver registered as
// driverName.
func MisconfiguredEndsAtOnce(t *testing.T, driverName string) {
	misconfiguredEndsAtOnce(t, driverName, Servers(t))
}

// misconfiguredEndsAtOnce is MisconfiguredEndsAtOnce, with addrs as the
// servers that refuse a wrong user.
func misconfiguredEndsAtOnce(t *testing.T, driverName string, addrs []string) {
	var secure [5]TLSServer // TLS only, with a password
	for i := range secure {
		secure[i] = StartTLSServer(t)
	}
	const wrong = "not-the-password-4711"
	type misconfiguration struct {
		name string
		url  func(i int) string // node i's
	}
	cases := []misconfiguration{
		{"wrong user and password (WRONGPASS)", func(i int) string { return "redis://nobody:" + wrong + "@" + addrs[i] }},
		{"wrong password (WRONGPASS)", func(i int) string { return secure[i].URL(wrong, true, "") }},
		{"no password (NOAUTH)", func(i int) string { return secure[i].URL("", true, "") }},
		{"TLS to plain servers", func(i int) string { return "rediss://" + addrs[i] }},
		{"plain to TLS servers", func(i int) string { return "redis://:" + secure[i].Password + "@" + secure[i].Addr }},
		{"server certificates not trusted", func(i int) string { return secure[i].URL(secure[i].Password, false, "") }},
		{"unknown hosts", func(i int) string { return fmt.Sprintf("redis://node%d.distlock.invalid:6379", i) }},
	}
	if driverName == "redigo" { // go-redis authenticates as user default, whom a server without a password lets in
		cases = append(cases, misconfiguration{"a password to servers without one", func(i int) string { return "redis://:" + wrong + "@" + addrs[i] }})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			urls := make([]string, 5)
			for i := range urls {
				urls[i] = c.url(i)
			}
			took, logs, err := acquireUntilItEnds(t, driverName, strings.Join(urls, ","))
			t.Logf("after %v: %v", took.Round(time.Millisecond), err)
			if !errors.Is(err, lock.ErrMisconfigured) {
				t.Errorf("Acquire = %v, want an error matching ErrMisconfigured", err)
			}
			if took > 3*time.Second {
				t.Errorf("Acquire took %v, want at most 3s", took)
			}
			for _, pw := range []string{wrong, secure[0].Password} {
				if strings.Contains(err.Error(), pw) {
					t.Errorf("the error quotes a password: %v", err)
				}
			}
			if logs != "" {
				t.Errorf("logged at warn level or above:\n%s", logs)
			}
		})
	}
}

// acquireUntilItEnds opens a client of dsn and calls its Acquire with
// context.Background(), and returns how long it took, what the client and
// slog.Default logged at warn level or above meanwhile, and its error. An
// Acquire still running after 20s fails the test, and is ended by closing
// the client.
func acquireUntilItEnds(t *testing.T, driverName, dsn string) (took time.Duration, warnings string, err error) {
	t.Helper()
	var logs logLines
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	prev := slog.Default()
	slog.SetDefault(logger)
	defer slog.SetDefault(prev)
	c, err := lock.Open(driverName, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetLogger(logger)
	start := time.Now()
	err = testenv.AcquireOrGiveUp(t, c, 20*time.Second)
	took = time.Since(start)
	if err == nil {
		t.Fatal("Acquire succeeded")
	}
	return took, logs.String(), err
}

// logLines collects a log handler's lines, which the client's goroutines
// may write.
type logLines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A DSN whose five ports nothing listens on (a wrong port, say) ends a
// waiting Acquire without a deadline after lock.MaxUnavailable, with an
// error that matches ErrUnavailable, and without a warning: every
// connection was refused, so no request reached a server, and there is
// nothing to clean up.
// RefusedEverywhereEndsAfterMaxUnavailable checks it for the Redlock
// driver registered as driverName.
func RefusedEverywhereEndsAfterMaxUnavailable(t *testing.T, driverName string) {
	if testing.Short() {
		t.Skip("takes lock.MaxUnavailable (10s)")
	}
	urls := make([]string, 5)
	for i := range urls {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		urls[i] = "redis://" + l.Addr().String()
		l.Close() // nothing listens there now: every dial is refused
	}
	took, logs, err := acquireUntilItEnds(t, driverName, strings.Join(urls, ","))
	t.Logf("after %v: %v", took.Round(time.Millisecond), err)
	if !errors.Is(err, lock.ErrUnavailable) || errors.Is(err, lock.ErrMisconfigured) {
		t.Errorf("Acquire = %v, want an error matching ErrUnavailable and not ErrMisconfigured", err)
	}
	if took < lock.MaxUnavailable || took > lock.MaxUnavailable+2*time.Second {
		t.Errorf("Acquire took %v, want about lock.MaxUnavailable (%v)", took, lock.MaxUnavailable)
	}
	if logs != "" {
		t.Errorf("logged at warn level or above:\n%s", logs)
	}
}

// With three of five nodes hung (SIGSTOP) and the default settings, once
// the first rounds have timed out and opened the hung nodes' breakers,
// TryAcquire fails within 500ms with an error that matches ErrUnavailable
// (it took 2s before rounds stopped waiting for the probes of presumed
// hung nodes), on an idle machine and beside a busy loop. Half the
// attempts come after a pause longer than the probes' timeout, so that
// they send probes of their own.
// HungMajorityFailsFast checks it for the Redlock driver registered as
// driverName.
func HungMajorityFailsFast(t *testing.T, driverName string) {
	hungMajorityFailsFast(t, driverName, Redis)
}

// hungMajorityFailsFast is HungMajorityFailsFast on the servers of set.
func hungMajorityFailsFast(t *testing.T, driverName string, set Set) {
	if testing.Short() {
		t.Skip("hangs servers")
	}
	const limit = 500 * time.Millisecond
	addrs := set.Addrs(t)
	faults := set.Faults(t, 5)
	c := openDriverClient(t, driverName, DSN(addrs, "key_prefix=hung-majority:"))
	ctx := context.Background()
	key := "k" + strconv.FormatInt(time.Now().UnixNano(), 36)
	answered := 0
	for n := range 10 { // round trips for the adaptive timeout to learn from
		if l, err := c.TryAcquire(ctx, key+"-warm-"+strconv.Itoa(n)); err == nil {
			answered++
			l.Release(ctx)
		}
	}
	if answered == 0 {
		t.Fatal("no TryAcquire succeeded before the servers hung")
	}
	t.Cleanup(func() {
		for i := range 3 {
			faults.Restart(t, i)
		}
	})
	for i := range 3 {
		faults.Hang(t, i)
	}
	try := func(n int) (time.Duration, error) {
		start := time.Now()
		_, err := c.TryAcquire(ctx, key+"-"+strconv.Itoa(n))
		return time.Since(start), err
	}
	var first []string
	for n := range 3 { // their timeouts open the hung nodes' breakers
		took, err := try(n)
		if err == nil {
			t.Fatal("TryAcquire succeeded with 3 of 5 nodes hung")
		}
		first = append(first, took.Round(time.Millisecond).String())
	}
	t.Logf("the first attempts, which open the breakers: %s", strings.Join(first, ", "))

	measure := func(label string) {
		t.Helper()
		var figures []string
		for n := range 4 {
			if n%2 == 1 {
				time.Sleep(1100 * time.Millisecond) // the probes out time out (1s at most)
			}
			took, err := try(100 + n)
			figures = append(figures, took.Round(time.Millisecond).String())
			if !errors.Is(err, lock.ErrUnavailable) || errors.Is(err, lock.ErrNotAcquired) {
				t.Errorf("%s: TryAcquire = %v, want an error matching ErrUnavailable", label, err)
			}
			if took >= limit {
				t.Errorf("%s: TryAcquire took %v, want less than %v", label, took, limit)
			}
		}
		t.Logf("%s: %s", label, strings.Join(figures, ", "))
	}
	measure("idle")
	busy := exec.Command("sh", "-c", "while :; do :; done")
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		busy.Process.Kill()
		busy.Wait()
	}()
	measure("beside a busy loop")
}

// openDriverClient opens a client of driverName, closed when the test
// ends, that logs nothing.
func openDriverClient(t *testing.T, driverName, dsn string) *lock.Client {
	t.Helper()
	c, err := lock.Open(driverName, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetLogger(slog.New(slog.DiscardHandler)) // the failed cleanups' warnings
	return c
}

// SilentServersEndAtTheNodeTimeout checks, for the Redlock driver
// registered as driverName, that five servers that accept connections and
// never answer end TryAcquire without a deadline within the node timeout
// before a first answer (redlock.MaxNodeTimeout) and a little more, with
// an error matching ErrUnavailable, and that a 3s deadline is kept within
// 300ms. What this catches is a deadline overrun by a node timeout (1s) or
// a hang; the margin is the loaded machine's: with -race beside other
// packages' tests on two cores, the goroutines that see the deadline
// waited 118ms for a core once in make test (rueidis, 2026-12-08), past
// the 100ms this allowed before.
func SilentServersEndAtTheNodeTimeout(t *testing.T, driverName string) {
	urls := make([]string, 5)
	for i := range urls {
		urls[i] = "redis://" + testenv.SilentServer(t)
	}
	c := openDriverClient(t, driverName, strings.Join(urls, ","))
	start := time.Now()
	_, err := c.TryAcquire(context.Background(), "k")
	took := time.Since(start)
	t.Logf("TryAcquire: %v after %v", err, took.Round(time.Millisecond))
	if !errors.Is(err, lock.ErrUnavailable) {
		t.Errorf("TryAcquire on silent servers = %v, want ErrUnavailable", err)
	}
	// The round undoes itself on every node, so the core's cleanup does
	// not wait a node timeout more.
	if limit := redlock.MaxNodeTimeout + 300*time.Millisecond; took > limit {
		t.Errorf("TryAcquire on silent servers took %v, want at most %v", took, limit)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start = time.Now()
	_, err = c.Acquire(ctx, "k")
	took = time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Acquire with a 3s deadline on silent servers = %v, want the deadline", err)
	}
	if took > 3300*time.Millisecond {
		t.Errorf("Acquire with a 3s deadline on silent servers took %v", took)
	}
}
