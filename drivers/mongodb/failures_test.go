package mongodb_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/internal/secrettest"
	"github.com/distlock/lock/drivers/mongodb"
	"github.com/distlock/lock/drivertest"
)

// timed runs f and returns how long it took and its error.
func timed(f func() error) (time.Duration, error) {
	start := time.Now()
	err := f()
	return time.Since(start), err
}

// acquireOnce is a TryAcquire that releases what it got.
func acquireOnce(ctx context.Context, c *lock.Client) error {
	l, err := c.TryAcquire(ctx, "k")
	if err != nil {
		return err
	}
	return l.Release(ctx)
}

// openShortTimeout opens a client on dsn, whose request timeout is short,
// trying again for up to 10s: lock.Open connects and reads the server's
// clock within that timeout, which a server on a machine loaded by make
// test missed once at 500ms (2026-12-07). The tests that use it are about
// what happens after the server falls silent, not about connecting.
func openShortTimeout(t *testing.T, dsn string) *lock.Client {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := lock.Open("mongodb", dsn)
		switch {
		case err == nil:
			return c
		case !errors.Is(err, lock.ErrUnavailable) || time.Now().After(deadline):
			t.Fatal(err)
		}
		t.Logf("lock.Open: %v; trying again", err)
	}
}

// viaProxy returns a proxy to the test server and a DSN through it for a
// fresh collection.
func viaProxy(t *testing.T, kv ...string) (*proxy, string) {
	t.Helper()
	uri := server(t)
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, u.Host)
	return p, strings.Replace(dsnFor(t, uri, kv...), u.Host, p.addr(), 1)
}

// A wrong password is a misconfiguration: Acquire ends at once, without
// retrying and without showing the password. The conformance suite checks
// the same through Harness.Misconfigured.
func TestAcquire_wrongPasswordIsMisconfigured(t *testing.T) {
	c := wrongPasswordClient(t)
	took, err := timed(func() error { _, err := c.Acquire(context.Background(), "k"); return err })
	t.Logf("after %v: %v", took, err)
	if !errors.Is(err, lock.ErrMisconfigured) || took > time.Second {
		t.Errorf("Acquire took %v and returned %v, want an error matching ErrMisconfigured within 1s", took, err)
	}
	if err != nil && strings.Contains(err.Error(), wrongPassword) {
		t.Error("the error shows the password")
	}
}

// wrongPassword is the password that wrongPasswordClient gives.
const wrongPassword = "not-the-password-4711"

// wrongPasswordClient returns a client of the FerretDB with passwords
// whose password is wrong.
func wrongPasswordClient(t *testing.T) *lock.Client {
	t.Helper()
	uri := drivertest.Lookup(t, "DISTLOCK_MONGODB_TLS_URI")
	release, err := drivertest.Hold(drivertest.Shared("postgres")) // that FerretDB keeps its data there
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), wrongPassword)
	return open(t, drivertest.WithParams(u.String(), "distlock_database", testDB))
}

// Servers that cannot be reached as configured: Acquire ends at once
// with an error matching ErrMisconfigured, not when the Go driver's server
// selection times out.
func TestAcquire_wrongEndIsMisconfigured(t *testing.T) {
	tlsURI := drivertest.Lookup(t, "DISTLOCK_MONGODB_TLS_URI")
	u, err := url.Parse(tlsURI)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Del("tlsCAFile")
	u.RawQuery = q.Encode()
	for name, dsn := range map[string]string{
		"unknown host":            "mongodb://node.distlock.invalid/",
		"certificate not trusted": u.String(),
	} {
		c := open(t, dsn)
		took, err := timed(func() error { _, err := c.Acquire(context.Background(), "k"); return err })
		t.Logf("%s: after %v: %v", name, took, err)
		// 3s, where the Go driver's server selection would wait 30s: a TLS
		// handshake that fails took 1.9s in make test, on a busy machine.
		if !errors.Is(err, lock.ErrMisconfigured) || took > 3*time.Second {
			t.Errorf("%s: Acquire took %v and returned %v, want an error matching ErrMisconfigured within 3s", name, took, err)
		}
	}
}

// Nothing listens on the port: the calls fail at once, not when the Go
// driver's server selection times out.
func TestAcquire_closedPortIsUnavailable(t *testing.T) {
	c := open(t, "mongodb://"+secrettest.ClosedAddr(t)+"/")
	for name, call := range map[string]func(context.Context, string, ...lock.Option) (*lock.Lock, error){
		"TryAcquire": c.TryAcquire, "Acquire": c.Acquire,
	} {
		took, err := timed(func() error { _, err := call(context.Background(), "k"); return err })
		t.Logf("%s: after %v: %v", name, took, err)
		if !errors.Is(err, lock.ErrUnavailable) || took > 500*time.Millisecond {
			t.Errorf("%s took %v and returned %v, want an error matching ErrUnavailable within 500ms", name, took, err)
		}
	}
}

// The server goes away after the client connected: the calls fail at once.
func TestTryAcquire_serverGoneIsUnavailable(t *testing.T) {
	p, dsn := viaProxy(t)
	c := open(t, dsn)
	if err := acquireOnce(drivertest.Context(t, 10*time.Second), c); err != nil {
		t.Fatal(err)
	}
	p.shut()
	// The Go driver checks a server at most every 500ms (its
	// minHeartbeatInterval), and the first call after the shutdown can
	// wait for two checks: one took 1.0013s in make test. The bound is far
	// below the request timeout (5s), which is what it tells apart.
	const bound = 2*500*time.Millisecond + 200*time.Millisecond
	for range 2 { // on the connection the server closed, then on a new one
		took, err := timed(func() error { return acquireOnce(context.Background(), c) })
		t.Logf("after %v: %v", took, err)
		if !errors.Is(err, lock.ErrUnavailable) || took > bound {
			t.Errorf("TryAcquire took %v and returned %v, want an error matching ErrUnavailable within %v", took, err, bound)
		}
	}
}

// A server that accepts connections and never answers: TryAcquire ends
// when the request timeout does, connecting included.
func TestTryAcquire_silentServerEndsAtRequestTimeout(t *testing.T) {
	const timeout = 500 * time.Millisecond
	c := open(t, "mongodb://"+newProxy(t, "").addr()+"/?distlock_request_timeout="+timeout.String())
	took, err := timed(func() error { return acquireOnce(context.Background(), c) })
	t.Logf("after %v: %v", took, err)
	if !errors.Is(err, lock.ErrUnavailable) || took < timeout || took > timeout+200*time.Millisecond {
		t.Errorf("TryAcquire took %v and returned %v, want an error matching ErrUnavailable after %v", took, err, timeout)
	}
}

// The caller's deadline, shorter than the request timeout, is kept.
func TestTryAcquire_silentServerKeepsCallerDeadline(t *testing.T) {
	const deadline = 3 * time.Second
	c := open(t, "mongodb://"+newProxy(t, "").addr()+"/")
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	took, err := timed(func() error { return acquireOnce(ctx, c) })
	t.Logf("after %v (%v late): %v", took, took-deadline, err)
	if !errors.Is(err, context.DeadlineExceeded) || took > deadline+100*time.Millisecond {
		t.Errorf("TryAcquire took %v and returned %v, want context.DeadlineExceeded within 100ms of %v", took, err, deadline)
	}
}

// Close waits for a call in flight on a server that fell silent, and the
// request timeout bounds that call and the release that cleans up after
// it.
func TestClose_callInFlightOnSilentServer(t *testing.T) {
	const timeout = 500 * time.Millisecond
	p, dsn := viaProxy(t, "distlock_request_timeout", timeout.String())
	c := openShortTimeout(t, dsn)
	if err := acquireOnce(drivertest.Context(t, 10*time.Second), c); err != nil {
		t.Fatal(err)
	}
	p.silence()
	done := make(chan error, 1)
	go func() { done <- acquireOnce(context.Background(), c) }()
	time.Sleep(100 * time.Millisecond)
	took, closeErr := timed(c.Close)
	err := <-done
	t.Logf("Close after %v (%v); the call: %v", took, closeErr, err)
	if !errors.Is(err, lock.ErrUnavailable) {
		t.Errorf("the call in flight returned %v, want an error matching ErrUnavailable", err)
	}
	// The call, its cleanup and the disconnect.
	if limit := 3*timeout + 500*time.Millisecond; took > limit {
		t.Errorf("Close took %v, want at most %v", took, limit)
	}
}

// The request timeout must be a positive duration.
func TestOpenConnector_requestTimeoutMustBePositive(t *testing.T) {
	for _, v := range []string{"0s", "-1s", "soon", ""} {
		if _, err := (mongodb.Driver{}).OpenConnector("mongodb://127.0.0.1/?distlock_request_timeout=" + v); err == nil {
			t.Errorf("distlock_request_timeout=%q: no error", v)
		}
	}
	if _, err := (mongodb.Driver{}).OpenConnector("mongodb://127.0.0.1/?distlock_request_timeout=250ms"); err != nil {
		t.Errorf("distlock_request_timeout=250ms: %v", err)
	}
}

// Do's function is cancelled at the lock's ValidUntil when the server
// stops answering while it runs, whatever the extensions and the release
// do against the silent server.
func TestDo_silentServerCancelsAtValidUntil(t *testing.T) {
	drivertest.DoCancelledAtValidUntil(t, func(t *testing.T) (*lock.Client, func()) {
		p, dsn := viaProxy(t, "distlock_request_timeout", "500ms")
		return openShortTimeout(t, dsn), p.silence
	})
}
