package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/postgres"
	"github.com/distlock/lock/drivertest"
)

// slack is how late a call may end after its bound on a busy machine.
const slack = 500 * time.Millisecond

// A server that accepts connections and never answers ends TryAcquire
// within the request timeout, the default one or the DSN's, or within a
// shorter connect_timeout, with an error matching ErrUnavailable; Close is
// quick afterwards.
func TestTryAcquire_silentServerEndsWithinRequestTimeout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		params  []string
		timeout time.Duration
	}{
		{"default", nil, postgres.DefaultRequestTimeout},
		{"fromDSN", []string{"distlock_request_timeout", "1500ms"}, 1500 * time.Millisecond},
		{"connectTimeout", []string{"connect_timeout", "1"}, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dsn := drivertest.WithParams("postgres://u@"+drivertest.SilentServer(t)+"/db", tc.params...)
			c, err := lock.Open("postgres", dsn)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			l, err := c.TryAcquire(context.Background(), "silent")
			took := time.Since(start)
			t.Logf("TryAcquire took %v: %v", took, err)
			if err == nil {
				l.Release(context.Background())
				t.Fatal("TryAcquire succeeded on a silent server")
			}
			if !errors.Is(err, lock.ErrUnavailable) {
				t.Errorf("error %v does not match ErrUnavailable", err)
			}
			if took < tc.timeout-100*time.Millisecond || took > tc.timeout+slack {
				t.Errorf("TryAcquire took %v, want about the request timeout, %v", took, tc.timeout)
			}
			start = time.Now()
			c.Close()
			if took := time.Since(start); took > slack {
				t.Errorf("Close took %v", took)
			}
		})
	}
}

// A caller's deadline shorter than the request timeout is kept, to 100ms,
// on a server that never answers.
func TestTryAcquire_silentServerKeepsCallerDeadline(t *testing.T) {
	t.Parallel()
	c := open(t, "postgres://u@"+drivertest.SilentServer(t)+"/db")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	_, err := c.TryAcquire(ctx, "silent")
	took := time.Since(start)
	t.Logf("TryAcquire took %v: %v", took, err)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v does not match context.DeadlineExceeded", err)
	}
	if took > 3*time.Second+100*time.Millisecond {
		t.Errorf("TryAcquire took %v, over its deadline of 3s", took)
	}
}

// Close waits for a call in flight on a server that stopped answering,
// while it connects or after, and that call ends within the request
// timeout (and, after a statement was sent, the core's release of what it
// may have taken, under the request timeout too).
func TestClose_callInFlight(t *testing.T) {
	const timeout = time.Second
	for _, tc := range []struct {
		name   string
		server func(t *testing.T) (dsn string, stall func()) // stall is nil for a server that never answered
		bound  time.Duration                                 // of the call in flight
	}{
		{"silentServer", func(t *testing.T) (string, func()) {
			return "postgres://u@" + drivertest.SilentServer(t) + "/db", nil
		}, timeout},
		{"stalledServer", func(t *testing.T) (string, func()) {
			dsn := server(t)
			p := newStallProxy(t, hostOf(t, dsn))
			return drivertest.WithParams(strings.Replace(dsn, hostOf(t, dsn), p.addr, 1), "distlock_table", freshTable(t, dsn)), p.stall
		}, 2 * timeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn, stall := tc.server(t)
			c, err := lock.Open("postgres", drivertest.WithParams(dsn, "distlock_request_timeout", timeout.String()))
			if err != nil {
				t.Fatal(err)
			}
			if stall != nil {
				if err := c.Ping(drivertest.Context(t, 10*time.Second)); err != nil {
					t.Fatal(err)
				}
				stall()
			}
			done := make(chan error, 1)
			start := time.Now()
			go func() {
				_, err := c.TryAcquire(context.Background(), "inflight")
				done <- err
			}()
			time.Sleep(200 * time.Millisecond)
			closing := time.Now()
			c.Close()
			took := time.Since(closing)
			t.Logf("Close took %v, with a call in flight", took)
			if bound := tc.bound - closing.Sub(start) + time.Second + slack; took > bound {
				t.Errorf("Close took %v, over %v", took, bound)
			}
			if err := <-done; err == nil {
				t.Error("TryAcquire succeeded on a server that does not answer")
			}
		})
	}
}

// The driver's Close cuts a call in flight short, on a connection whose
// server stopped answering, and returns within a second.
func TestConnClose_callInFlight(t *testing.T) {
	dsn := server(t)
	p := newStallProxy(t, hostOf(t, dsn))
	pdsn := drivertest.WithParams(strings.Replace(dsn, hostOf(t, dsn), p.addr, 1), "distlock_table", freshTable(t, dsn))
	connector, err := postgres.Driver{}.OpenConnector(pdsn)
	if err != nil {
		t.Fatal(err)
	}
	ctx := drivertest.Context(t, 10*time.Second)
	cn, err := connector.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cn.Acquire(ctx, "inflight/"+drivertest.RandomHex(4), "v1", time.Minute); err != nil {
		t.Fatal(err)
	}
	p.stall()
	done := make(chan error, 1)
	go func() {
		_, err := cn.Acquire(context.Background(), "inflight/"+drivertest.RandomHex(4), "v2", time.Minute)
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	closed := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		cn.Close()
		closed <- time.Since(start)
	}()
	select {
	case took := <-closed:
		t.Logf("Close took %v, with a call in flight", took)
		if took > time.Second+slack {
			t.Errorf("Close took %v, over a second", took)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close has not returned after 10s")
	}
	if err := <-done; err == nil {
		t.Error("the call in flight succeeded")
	}
}

// A statement sent to a server that stopped answering ends within the
// request timeout, with an error matching ErrUnavailable.
func TestTryAcquire_stalledServerEndsWithinRequestTimeout(t *testing.T) {
	dsn := server(t)
	p := newStallProxy(t, hostOf(t, dsn))
	const timeout = time.Second
	c := open(t, drivertest.WithParams(strings.Replace(dsn, hostOf(t, dsn), p.addr, 1),
		"distlock_table", freshTable(t, dsn), "distlock_request_timeout", timeout.String()))
	ctx := drivertest.Context(t, 10*time.Second)
	l, err := c.TryAcquire(ctx, "stalled/"+drivertest.RandomHex(4))
	if err != nil {
		t.Fatal(err)
	}
	l.Release(ctx)
	p.stall()
	start := time.Now()
	_, err = c.TryAcquire(context.Background(), "stalled/"+drivertest.RandomHex(4))
	took := time.Since(start)
	t.Logf("TryAcquire took %v: %v", took, err)
	if !errors.Is(err, lock.ErrUnavailable) {
		t.Errorf("error %v does not match ErrUnavailable", err)
	}
	// The core's release of what the attempt may have taken has a bound
	// of its own, of 2s.
	if took > timeout+2*time.Second+slack {
		t.Errorf("TryAcquire took %v, over the request timeout of %v and the cleanup's 2s", took, timeout)
	}
}

// A caller's deadline shorter than the request timeout is kept, to 100ms,
// on a connected client whose server stopped answering, when no statement
// left the client: the pool pings its connection (idle for more than a
// second) before using it, the ping gets no answer, and the core's release
// of what the attempt might have taken is answered at once.
func TestTryAcquire_stalledServerKeepsCallerDeadline(t *testing.T) {
	dsn := server(t)
	p := newStallProxy(t, hostOf(t, dsn))
	c := open(t, drivertest.WithParams(strings.Replace(dsn, hostOf(t, dsn), p.addr, 1), "distlock_table", freshTable(t, dsn)))
	if err := c.Ping(drivertest.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	p.stall()
	time.Sleep(1100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	_, err := c.TryAcquire(ctx, "stalled")
	took := time.Since(start)
	t.Logf("TryAcquire took %v: %v", took, err)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v does not match context.DeadlineExceeded", err)
	}
	if took > 3*time.Second+100*time.Millisecond {
		t.Errorf("TryAcquire took %v, over its deadline of 3s", took)
	}
}

// On the fast path (no caller's deadline, a free connection), the pool's
// ping of a connection idle for more than a second ends at the request
// timeout when the server stopped answering, and so does the new
// connection the pool tries next: the call fails with an error matching
// ErrUnavailable within the request timeout, and the release of what it
// might have taken is answered at once, since no statement left.
func TestTryAcquire_stalledServerIdleConnectionEndsWithinRequestTimeout(t *testing.T) {
	dsn := server(t)
	p := newStallProxy(t, hostOf(t, dsn))
	const timeout = time.Second
	c := open(t, drivertest.WithParams(strings.Replace(dsn, hostOf(t, dsn), p.addr, 1),
		"distlock_table", freshTable(t, dsn), "distlock_request_timeout", timeout.String()))
	if err := c.Ping(drivertest.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	p.stall()
	time.Sleep(1100 * time.Millisecond)
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := c.TryAcquire(context.Background(), "stalled")
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * timeout):
		t.Fatalf("TryAcquire has not returned after %v, with a request timeout of %v", 10*timeout, timeout)
	}
	took := time.Since(start)
	t.Logf("TryAcquire took %v: %v", took, err)
	if !errors.Is(err, lock.ErrUnavailable) {
		t.Errorf("error %v does not match ErrUnavailable", err)
	}
	if took > timeout+slack {
		t.Errorf("TryAcquire took %v, over the request timeout of %v", took, timeout)
	}
}

// Do's function is cancelled at the lock's ValidUntil when the server
// stops answering while it runs, whatever the extensions and the release
// do against the stalled server.
func TestDo_stalledServerCancelsAtValidUntil(t *testing.T) {
	drivertest.DoCancelledAtValidUntil(t, func(t *testing.T) (*lock.Client, func()) {
		dsn := server(t)
		p := newStallProxy(t, hostOf(t, dsn))
		c, err := lock.Open("postgres", drivertest.WithParams(strings.Replace(dsn, hostOf(t, dsn), p.addr, 1),
			"distlock_table", freshTable(t, dsn), "distlock_request_timeout", "500ms"))
		if err != nil {
			t.Fatal(err)
		}
		return c, p.stall
	})
}

// A connection of the driver's own pool keeps the deadline of the last
// fast call that used it. Every kind of call made on it after that
// deadline has passed must set its own: a call that reached the pool
// directly failed with an i/o timeout.
func TestCalls_afterAPastCallsDeadline(t *testing.T) {
	const timeout = 300 * time.Millisecond
	dsn := server(t)
	table := freshTable(t, dsn)
	c := connect(t, drivertest.WithParams(dsn, "distlock_table", table,
		"pool_max_conns", "1", "distlock_request_timeout", timeout.String()))
	ctx := ctxFor(t, 30*time.Second)
	stale := func(t *testing.T) {
		t.Helper()
		// A fast call sets the connection's deadline; once it has passed,
		// and before the pool's ping of an idle connection (after 1s),
		// the connection holds a deadline in the past.
		if _, err := c.Acquire(context.Background(), "stale/"+drivertest.RandomHex(4), "v", time.Minute); err != nil {
			t.Fatal(err)
		}
		time.Sleep(timeout + 100*time.Millisecond)
	}
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"Inspect", func() error { _, _, err := c.(driver.Inspector).Inspect(ctx, "stale/none"); return err }},
		{"CheckSettings", func() error { _, err := c.(driver.SettingsChecker).CheckSettings(ctx); return err }},
		{"ListScratch", func() error { _, err := c.(driver.ScratchLister).ListScratch(ctx, table); return err }},
		{"Ping", func() error { return c.(driver.Pinger).Ping(ctx) }},
		{"Drop", func() error { return c.(driver.Dropper).Drop(ctx) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stale(t)
			if err := tc.call(); err != nil {
				t.Errorf("%s after a past call's deadline: %v", tc.name, err)
			}
		})
	}
}

// Sixteen goroutines contend for four keys through a pool of two
// connections, so that most calls wait for a connection (the slow path),
// and the server stops answering halfway. Every lock is still valid when
// TryAcquire returns it, no two holders of a key overlap, every call ends
// within the request timeout and the cleanup's bound, stalled or not, and
// the calls after the stall fail with ErrUnavailable, never as held.
func TestContention_stalledServerSmallPool(t *testing.T) {
	dsn := server(t)
	p := newStallProxy(t, hostOf(t, dsn))
	const timeout = time.Second
	c := open(t, drivertest.WithParams(strings.Replace(dsn, hostOf(t, dsn), p.addr, 1),
		"distlock_table", freshTable(t, dsn), "distlock_request_timeout", timeout.String(), "pool_max_conns", "2"))
	const bound = timeout + 2*time.Second + slack // the attempt, then the core's cleanup
	var (
		mu      sync.Mutex
		holders = map[string]*lock.Lock{} // each key's current holder
		granted atomic.Int64
		late    atomic.Int64 // failures of calls that began after the stall
		stalled atomic.Int64 // when the stall began, in Unix ns; 0 before
	)
	afterStall := func(start time.Time) bool {
		at := stalled.Load()
		return at != 0 && start.UnixNano() > at
	}
	stallAt := time.Now().Add(time.Second)
	stop := stallAt.Add(3 * time.Second)
	var wg sync.WaitGroup
	for g := range 16 {
		key := fmt.Sprintf("contended/%d", g%4)
		wg.Go(func() {
			for time.Now().Before(stop) {
				start := time.Now()
				l, err := c.TryAcquire(context.Background(), key)
				if took := time.Since(start); took > bound {
					t.Errorf("TryAcquire took %v, over %v", took, bound)
				}
				switch {
				case err == nil:
				case errors.Is(err, lock.ErrNotAcquired) && !afterStall(start):
					continue
				case errors.Is(err, lock.ErrUnavailable):
					if afterStall(start) {
						late.Add(1)
					}
					continue
				default:
					t.Errorf("TryAcquire (after the stall: %v): %v", afterStall(start), err)
					continue
				}
				now := time.Now()
				if !l.ValidUntil().After(now) {
					t.Errorf("TryAcquire returned a lock valid until %v, %v ago", l.ValidUntil(), now.Sub(l.ValidUntil()))
				}
				mu.Lock()
				if prev := holders[key]; prev != nil && prev.ValidUntil().After(now) {
					t.Errorf("%s granted while its holder is valid for %v more", key, prev.ValidUntil().Sub(now))
				}
				holders[key] = l
				mu.Unlock()
				granted.Add(1)
				time.Sleep(time.Millisecond)
				mu.Lock()
				delete(holders, key)
				mu.Unlock()
				l.Release(context.Background()) // fails once stalled: the lease then ends by its TTL
			}
		})
	}
	time.Sleep(time.Until(stallAt))
	p.stall()
	stalled.Store(time.Now().UnixNano())
	wg.Wait()
	t.Logf("%d granted, %d calls after the stall failed as unavailable", granted.Load(), late.Load())
	if granted.Load() == 0 || late.Load() == 0 {
		t.Errorf("%d granted, %d failed after the stall: the test did not contend, or did not stall", granted.Load(), late.Load())
	}
	start := time.Now()
	c.Close()
	if took := time.Since(start); took > bound {
		t.Errorf("Close took %v", took)
	}
}
