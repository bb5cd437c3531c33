package etcd_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/etcd"
	"github.com/distlock/lock/internal/testenv"
)

// overshoot is how far past a deadline or timeout a call may return.
const overshoot = 100 * time.Millisecond

// TestAcquire_hungClusterKeepsTheDeadline stops every member (SIGSTOP) and
// gives acquisitions a 3s deadline, shorter than the request timeout: one
// on a connected client with a lease granted ahead (so its transaction is
// sent, and the core releases after the failure), one on a client that
// must connect first. Both return within 100ms of the deadline. Meanwhile
// a connection closed with an acquisition in flight returns at once, and
// ends that acquisition.
func TestAcquire_hungClusterKeepsTheDeadline(t *testing.T) {
	c := theCluster(t)
	c.healthy(t, 30*time.Second)
	full := dsn(t, "request_timeout", "10s", "dial_timeout", "10s", "member_timeout", "1s")
	connected := open(t, full)
	l, err := connected.Acquire(ctxFor(t, 10*time.Second), "warm") // a lease granted ahead
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctxFor(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	connecting, err := lock.Open("etcd", full)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { connecting.Close() })
	cn := testenv.Connect(t, etcd.Driver{}, full)
	defer cn.Close()
	if _, err := cn.Acquire(ctxFor(t, 10*time.Second), "warm-conn", "v0", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	hangAll(t, c)

	const deadline = 3 * time.Second
	var wg sync.WaitGroup
	for name, client := range map[string]*lock.Client{"connected": connected, "connecting": connecting} {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			start := time.Now()
			_, err := client.Acquire(ctx, "k")
			took := time.Since(start)
			t.Logf("%s: Acquire with a %v deadline returned after %v: %v", name, deadline, took, err)
			if !errors.Is(err, context.DeadlineExceeded) || took > deadline+overshoot {
				t.Errorf("%s: Acquire with a %v deadline = %v after %v, want context.DeadlineExceeded within %v",
					name, deadline, err, took, deadline+overshoot)
			}
		})
	}
	ended := make(chan time.Time, 1)
	go func() {
		cn.Acquire(context.Background(), "in-flight", "v1", 10*time.Second)
		ended <- time.Now()
	}()
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	cn.Close()
	closed := time.Now()
	after := (<-ended).Sub(closed)
	t.Logf("Close with an acquisition in flight returned after %v, the acquisition %v after Close", closed.Sub(start), after)
	if took := closed.Sub(start); took > overshoot || after > overshoot {
		t.Errorf("Close with an acquisition in flight took %v, and the acquisition ended %v after it, want at most %v each", took, after, overshoot)
	}
	wg.Wait()
}

// hangAll stops every member of c, and resumes them when the test ends.
func hangAll(t *testing.T, c *cluster) {
	t.Helper()
	t.Cleanup(func() {
		for i := range c.Nodes() {
			c.Restart(t, i)
		}
		c.healthy(t, 30*time.Second)
	})
	for i := range c.Nodes() {
		c.Hang(t, i)
	}
}

// TestTryAcquire_silentServerIsUnavailable points a client at a server that
// accepts connections and never answers: TryAcquire, which connects first,
// fails within the request timeout with an error matching
// lock.ErrUnavailable, and Close, with another TryAcquire in flight,
// returns within the request timeout too (the client waits for its calls).
func TestTryAcquire_silentServerIsUnavailable(t *testing.T) {
	const requestTimeout = time.Second
	c, err := lock.Open("etcd", "etcd://"+testenv.SilentServer(t)+"?request_timeout=1s&member_timeout=300ms")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, err = c.TryAcquire(context.Background(), "k")
	took := time.Since(start)
	t.Logf("TryAcquire returned after %v: %v", took, err)
	if !errors.Is(err, lock.ErrUnavailable) || took > requestTimeout+overshoot {
		t.Errorf("TryAcquire = %v after %v, want lock.ErrUnavailable within %v", err, took, requestTimeout+overshoot)
	}
	go c.TryAcquire(context.Background(), "k")
	time.Sleep(100 * time.Millisecond)
	start = time.Now()
	c.Close()
	took = time.Since(start)
	t.Logf("Close with a TryAcquire in flight returned after %v", took)
	if took > requestTimeout+overshoot {
		t.Errorf("Close with a TryAcquire in flight took %v, want at most %v", took, requestTimeout+overshoot)
	}
}

// TestAcquire_refusedCredentialsAreMisconfigured opens clients on the
// member with authentication with credentials it refuses: Acquire, with
// no deadline, fails at once with an error matching lock.ErrMisconfigured
// that shows no password. The right ones work.
func TestAcquire_refusedCredentialsAreMisconfigured(t *testing.T) {
	u, err := url.Parse(testenv.Lookup(t, "DISTLOCK_ETCD_AUTH_DSN"))
	if err != nil {
		t.Fatal(err)
	}
	password, _ := u.User.Password()
	query := "?prefix=distlock-test/" + randomHex(4) + "/&member_timeout=500ms&request_timeout=3s"
	root := open(t, "etcd://"+u.User.String()+"@"+u.Host+query)
	l, err := root.TryAcquire(ctxFor(t, 10*time.Second), "k")
	if err != nil {
		t.Fatalf("TryAcquire as %s: %v", u.User.Username(), err)
	}
	if err := l.Release(ctxFor(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, userinfo string }{
		{"wrong password", "root:wrong-" + password + "@"},
		{"unknown user", "mallory:" + password + "@"},
		{"user without a role", "nobody:" + password + "@"},
		{"no user", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := lock.Open("etcd", "etcd://"+tc.userinfo+u.Host+query)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			start := time.Now()
			err = testenv.AcquireOrGiveUp(t, c, 5*time.Second)
			took := time.Since(start)
			t.Logf("Acquire returned after %v: %v", took, err)
			if !errors.Is(err, lock.ErrMisconfigured) || took > time.Second {
				t.Errorf("Acquire = %v after %v, want lock.ErrMisconfigured within 1s", err, took)
			}
			if err != nil && strings.Contains(err.Error(), password) {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}
