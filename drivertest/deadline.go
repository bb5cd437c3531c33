package drivertest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/internal/testenv"
)

// Overshoot is how far past a deadline or timeout a call may return: the
// wake-up of a goroutine on a loaded machine (etcd's hung-cluster test
// returned 172ms late in make test, where 4 packages with -race share two
// cores). A driver that ignored the deadline would overshoot by a member
// or request timeout, a second or more.
const Overshoot = 250 * time.Millisecond

// HungBackend is the setting of [HungBackend.KeepsDeadlines]: clients of a
// backend about to hang (every member stopped with SIGSTOP, say).
type HungBackend struct {
	// Connected is a client that has acquired and released a lock.
	Connected *lock.Client

	// Connecting is a client that has not connected yet.
	Connecting *lock.Client

	// Conn is a driver connection, connected.
	Conn driver.Conn

	// Hang hangs the backend, and mends it when the test ends.
	Hang func(t *testing.T)

	// TTL is the TTL of the acquisition that Conn has in flight when it
	// closes.
	TTL time.Duration

	// CloseBound is how long closing Conn may take with that acquisition
	// in flight, besides Overshoot.
	CloseBound time.Duration
}

// KeepsDeadlines hangs the backend and gives an acquisition on each client
// a 3s deadline, shorter than their request timeout: both return within
// Overshoot of the deadline, with an error matching
// context.DeadlineExceeded. Meanwhile Conn, closed with an acquisition in
// flight, returns within CloseBound, and that acquisition ends within
// Overshoot of Close.
func (h HungBackend) KeepsDeadlines(t *testing.T) {
	t.Helper()
	h.Hang(t)
	const deadline = 3 * time.Second
	var wg sync.WaitGroup
	for name, client := range map[string]*lock.Client{"connected": h.Connected, "connecting": h.Connecting} {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			start := time.Now()
			_, err := client.Acquire(ctx, "k")
			took := time.Since(start)
			t.Logf("%s: Acquire with a %v deadline returned after %v: %v", name, deadline, took, err)
			if !errors.Is(err, context.DeadlineExceeded) || took > deadline+Overshoot {
				t.Errorf("%s: Acquire with a %v deadline = %v after %v, want context.DeadlineExceeded within %v",
					name, deadline, err, took, deadline+Overshoot)
			}
		})
	}
	ended := make(chan time.Time, 1)
	go func() {
		h.Conn.Acquire(context.Background(), "in-flight", "v1", h.TTL)
		ended <- time.Now()
	}()
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	h.Conn.Close()
	closed := time.Now()
	after := (<-ended).Sub(closed)
	t.Logf("Close with an acquisition in flight returned after %v, the acquisition %v after Close", closed.Sub(start), after)
	if took := closed.Sub(start); took > h.CloseBound+Overshoot || after > Overshoot {
		t.Errorf("Close with an acquisition in flight took %v, and the acquisition ended %v after it, want at most %v and %v",
			took, after, h.CloseBound+Overshoot, Overshoot)
	}
	wg.Wait()
}

// SilentServerIsUnavailable points a client of the driver registered as
// name at a server that accepts connections and never answers (dsn makes
// the DSN from its address, with a request timeout of 1s): TryAcquire,
// which connects first, fails within the request timeout with an error
// matching lock.ErrUnavailable, and Close, with another TryAcquire in
// flight, returns within the request timeout too (the client waits for
// its calls).
func SilentServerIsUnavailable(t *testing.T, name string, dsn func(addr string) string) {
	t.Helper()
	const requestTimeout = time.Second
	c, err := lock.Open(name, dsn(testenv.SilentServer(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, err = c.TryAcquire(context.Background(), "k")
	took := time.Since(start)
	t.Logf("TryAcquire returned after %v: %v", took, err)
	if !errors.Is(err, lock.ErrUnavailable) || took > requestTimeout+Overshoot {
		t.Errorf("TryAcquire = %v after %v, want lock.ErrUnavailable within %v", err, took, requestTimeout+Overshoot)
	}
	go c.TryAcquire(context.Background(), "k")
	time.Sleep(100 * time.Millisecond)
	start = time.Now()
	c.Close()
	took = time.Since(start)
	t.Logf("Close with a TryAcquire in flight returned after %v", took)
	if took > requestTimeout+Overshoot {
		t.Errorf("Close with a TryAcquire in flight took %v, want at most %v", took, requestTimeout+Overshoot)
	}
}

// RefusedCredentials runs a subtest for each of cases, a name and the DSN
// of a client whose credentials the backend refuses: Acquire, with no
// deadline, fails within 1s with an error matching lock.ErrMisconfigured,
// and the error does not show password.
func RefusedCredentials(t *testing.T, name, password string, cases [][2]string) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc[0], func(t *testing.T) {
			c, err := lock.Open(name, tc[1])
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

// SilentServer listens on a port of 127.0.0.1, accepts connections and
// never reads or answers, until the test ends. It returns its address: a
// server that is up but hung, as a driver's request timeout must bound.
func SilentServer(t testing.TB) string {
	t.Helper()
	return testenv.SilentServer(t)
}

// AcquireOrGiveUp calls c.Acquire on key "k" with no deadline, releasing
// what it gets, and closes c if it has not returned after d, failing the
// test. It returns Acquire's error.
func AcquireOrGiveUp(t testing.TB, c *lock.Client, d time.Duration) error {
	t.Helper()
	return testenv.AcquireOrGiveUp(t, c, d)
}

// DoCancelledAtValidUntil runs Do with a TTL of 1s on a client from open,
// whose brk breaks the backend (a stalled or silent server) once the
// function runs, and fails t unless the function's context is cancelled
// within 25ms of the lock's ValidUntil, with Do's error matching
// lock.ErrLost. It closes each client it opens. DISTLOCK_DO_LAG_RUNS
// repeats it, for a measurement.
func DoCancelledAtValidUntil(t *testing.T, open func(t *testing.T) (c *lock.Client, brk func())) {
	t.Helper()
	testenv.DoCancelledAtValidUntil(t, open)
}
