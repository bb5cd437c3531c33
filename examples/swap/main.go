// Command swap is one program that runs on every backend: the driver and
// its DSN come from flags, and nothing in the code names a backend. It
// acquires a lock, shows its fencing token, asks who holds the key
// (Client.Inspect, skipped where the driver cannot tell), releases it, and
// then runs a function under Client.Do for three TTLs while Do keeps the
// lease alive, showing that another client is refused all along.
//
//	go run ./examples/swap                   # memory
//	go run ./examples/swap -driver goredis -dsn 'redis://127.0.0.1:7001?fencing=true,redis://127.0.0.1:7002,redis://127.0.0.1:7003,redis://127.0.0.1:7004,redis://127.0.0.1:7005'
//	go run ./examples/swap -driver postgres -dsn 'postgres://postgres@127.0.0.1:15432/distlock?sslmode=disable'
//	go run ./examples/swap -driver mongodb -dsn 'mongodb://127.0.0.1:27117/'
//
// Those are the test servers' DSNs (scripts/services.sh up). The flags
// default to $DISTLOCK_DRIVER and $DISTLOCK_DSN, and else to the memory
// driver, whose DSN names a store in the process.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/distlock/lock"
	_ "github.com/distlock/lock/drivers/goredis"
	_ "github.com/distlock/lock/drivers/memory"
	_ "github.com/distlock/lock/drivers/mongodb"
	_ "github.com/distlock/lock/drivers/postgres"
	_ "github.com/distlock/lock/drivers/redigo"
)

func main() {
	driverName := flag.String("driver", envOr("DISTLOCK_DRIVER", "memory"), "the lock driver ($DISTLOCK_DRIVER): "+strings.Join(lock.Drivers(), ", "))
	dsn := flag.String("dsn", os.Getenv("DISTLOCK_DSN"), "the driver's DSN ($DISTLOCK_DSN; for memory, a store name)")
	ttl := flag.Duration("ttl", 500*time.Millisecond, "the locks' TTL; the function under Do works for three of them")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, *driverName, *dsn, *ttl); err != nil {
		fmt.Fprintln(os.Stderr, "swap:", err)
		os.Exit(1)
	}
}

// envOr returns the environment variable name, or def if it is unset or empty.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// run opens two clients of driverName at dsn and walks a fresh key through
// the portable API, with ttl as the clients' default TTL.
func run(ctx context.Context, w io.Writer, driverName, dsn string, ttl time.Duration) error {
	c, err := lock.Open(driverName, dsn, lock.WithTTL(ttl))
	if err != nil {
		return err
	}
	defer c.Close()
	other, err := lock.Open(driverName, dsn, lock.WithTTL(ttl))
	if err != nil {
		return err
	}
	defer other.Close()
	// Ping checks the DSN, and opens each client's connections before the
	// first acquisition, whose requests a short TTL leaves little time.
	for _, cl := range []*lock.Client{c, other} {
		if err := cl.Ping(ctx); err != nil {
			return err
		}
	}
	// A key of this run's own, so that runs against a shared backend do
	// not wait for each other, and its tokens start afresh.
	key := "swap-example/" + randomSuffix()
	fmt.Fprintf(w, "driver %s, key %q, TTL %v\n", driverName, key, ttl)
	if err := acquireRelease(ctx, w, c, key); err != nil {
		return err
	}
	return doExtended(ctx, w, c, other, key, ttl)
}

// acquireRelease acquires key, shows its token and holder, and releases it.
func acquireRelease(ctx context.Context, w io.Writer, c *lock.Client, key string) error {
	l, err := c.Acquire(ctx, key)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "acquire: lock %s, %s, valid for %v\n", l.ID(), tokenOf(l), time.Until(l.ValidUntil()).Round(time.Millisecond))
	if err := inspect(ctx, w, c, key, l); err != nil {
		l.Release(ctx)
		return err
	}
	if err := l.Release(ctx); err != nil {
		return err
	}
	fmt.Fprintln(w, "release: ok")
	return inspect(ctx, w, c, key, l)
}

// inspect says who holds key, and whether that is l. A driver that cannot
// tell is not an error: the example skips the step.
func inspect(ctx context.Context, w io.Writer, c *lock.Client, key string, l *lock.Lock) error {
	h, held, err := c.Inspect(ctx, key)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		fmt.Fprintln(w, "inspect: this driver cannot tell who holds a key; skipped")
		return nil
	case err != nil:
		return err
	case !held:
		fmt.Fprintln(w, "inspect: nobody holds the key")
		return nil
	}
	token := "no token"
	if h.Fenced {
		token = fmt.Sprintf("token %v", h.Token)
	}
	fmt.Fprintf(w, "inspect: held by %s (this lock: %t), %s, about %v left\n", h.ID, h.ID == l.ID(), token, h.TTL.Round(10*time.Millisecond))
	return nil
}

// doExtended runs a function under c.Do for three TTLs, so that only Do's
// extensions keep the lock, and checks at the end that other is still
// refused the key.
func doExtended(ctx context.Context, w io.Writer, c, other *lock.Client, key string, ttl time.Duration) error {
	before := c.Stats().Extended
	work := 3 * ttl
	err := c.Do(ctx, key, func(ctx context.Context) error {
		fmt.Fprintf(w, "do: holding the key, %s; working for %v (3 TTLs)\n", tokenOf(lock.FromContext(ctx)), work)
		select {
		case <-time.After(work):
		case <-ctx.Done():
			return context.Cause(ctx) // the lock was lost: stop working
		}
		l, err := other.TryAcquire(ctx, key)
		if err == nil {
			l.Release(ctx)
			return errors.New("another client acquired the key while Do held it")
		}
		fmt.Fprintf(w, "do: another client's TryAcquire: %v\n", err)
		if !errors.Is(err, lock.ErrNotAcquired) {
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	extended := c.Stats().Extended - before
	fmt.Fprintf(w, "do: done and released; Do extended the lease %d times\n", extended)
	if extended == 0 {
		return errors.New("the lease was never extended during Do")
	}
	return nil
}

// tokenOf describes l's fencing token.
func tokenOf(l *lock.Lock) string {
	if tok, ok := l.Token(); ok {
		return fmt.Sprintf("token %v", tok)
	}
	return "no fencing token (the driver issues none)"
}

// randomSuffix returns 8 random hex digits.
func randomSuffix() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
