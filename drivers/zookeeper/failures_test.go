package zookeeper_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/zookeeper"
	"github.com/distlock/lock/internal/testenv"
)

// overshoot is how far past a deadline or timeout a call may return.
const overshoot = 100 * time.Millisecond

// TestAcquire_hungEnsembleKeepsTheDeadline stops every member (SIGSTOP) and
// gives acquisitions a 3s deadline, shorter than the request timeout: one
// on a connected client (its session granted), one on a client that must
// connect first. Both return within 100ms of the deadline. Meanwhile a
// connection closed with an acquisition in flight returns within its
// bound (about a second: the client's wait for the end of its session).
func TestAcquire_hungEnsembleKeepsTheDeadline(t *testing.T) {
	e := theEnsemble(t)
	e.healthy(t, 30*time.Second)
	full, _ := dsn(t, "request_timeout", "10s", "dial_timeout", "10s", "member_timeout", "1s")
	connected := open(t, full)
	l, err := connected.Acquire(ctxFor(t, 10*time.Second), "warm")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctxFor(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	connecting, err := lock.Open("zookeeper", full)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { connecting.Close() })
	cn := testenv.Connect(t, zookeeper.Driver{}, full)
	defer cn.Close()
	hangAll(t, e)

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
		cn.Acquire(context.Background(), "in-flight", "v1", zookeeper.DefaultSessionTimeout)
		ended <- time.Now()
	}()
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	cn.Close()
	closed := time.Now()
	after := (<-ended).Sub(closed)
	t.Logf("Close with an acquisition in flight returned after %v, the acquisition %v after Close", closed.Sub(start), after)
	if took := closed.Sub(start); took > time.Second+overshoot || after > overshoot {
		t.Errorf("Close with an acquisition in flight took %v, and the acquisition ended %v after it, want at most %v and %v",
			took, after, time.Second+overshoot, overshoot)
	}
	wg.Wait()
}

// hangAll stops every member of e, and resumes them when the test ends.
func hangAll(t *testing.T, e *ensemble) {
	t.Helper()
	t.Cleanup(func() {
		for i := range e.Nodes() {
			e.Restart(t, i)
		}
		e.healthy(t, 30*time.Second)
	})
	for i := range e.Nodes() {
		e.Hang(t, i)
	}
}

// TestTryAcquire_silentServerIsUnavailable points a client at a server that
// accepts connections and never answers: TryAcquire, which connects first,
// fails within the request timeout with an error matching
// lock.ErrUnavailable, and Close, with another TryAcquire in flight,
// returns within the request timeout too (the client waits for its calls).
func TestTryAcquire_silentServerIsUnavailable(t *testing.T) {
	const requestTimeout = time.Second
	c, err := lock.Open("zookeeper", "zk://"+testenv.SilentServer(t)+"/distlock-test?request_timeout=1s&member_timeout=300ms")
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

// TestAcquire_identityTheACLRefusesIsMisconfigured has a digest user make
// a root of its own (its nodes' ACL admits that user alone), and clients
// with other identities use it: Acquire, with no deadline, fails at once
// with an error matching lock.ErrMisconfigured that shows no password.
func TestAcquire_identityTheACLRefusesIsMisconfigured(t *testing.T) {
	theEnsemble(t).healthy(t, 30*time.Second)
	// A root of its own at the top: its ACL must not fall on other tests'
	// nodes.
	const password = "s3cr3t-pw"
	root := "/distlock-test-acl-" + randomHex(4)
	hosts := strings.Join(servers(t), ",")
	query := "?request_timeout=2s&member_timeout=500ms"
	owner := open(t, "zk://app:"+password+"@"+hosts+root+query)
	l, err := owner.TryAcquire(ctxFor(t, 10*time.Second), "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctxFor(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Remove the root, as the user, once the clients let go.
		authed := rawConn(t)
		if err := authed.AddAuth("digest", []byte("app:"+password)); err != nil {
			t.Log(err)
			return
		}
		authed.Delete(root+"/k", -1)
		authed.Delete(root, -1)
	})
	for _, tc := range []struct{ name, userinfo string }{
		{"wrong password", "app:wrong-" + password + "@"},
		{"another user", "mallory:" + password + "@"},
		{"no user", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := lock.Open("zookeeper", "zk://"+tc.userinfo+hosts+root+query)
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
