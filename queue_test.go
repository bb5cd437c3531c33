package lock_test

// A client's queue of waiting calls, end to end on the memory driver: turns
// in arrival order, handovers on Release. wait_test.go tests the queue's
// parts alone.

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/memory"
	"github.com/distlock/lock/fencing"
)

func TestAcquire_waitersOfOneClientTakeTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		c, cc := openCounting(t, store)
		ctx := context.Background()
		holder := mustAcquire(t, c, "k", lock.WithTTL(time.Hour))

		const waiters = 5
		got := startWaiters(t, c, "k", waiters, lock.WithTTL(time.Hour), lock.WithRetry(lock.FixedDelay(time.Hour)))
		// The first waiter tried, subscribed and tried again; the others
		// queued behind it without trying.
		if n := cc.attempts.Load(); n != 3 {
			t.Errorf("%d attempts before the release, want 3 (the holder's, and the first waiter's two)", n)
		}
		before := cc.attempts.Load()
		start := time.Now()
		if err := holder.Release(ctx); err != nil {
			t.Fatal(err)
		}
		for want := range waiters {
			a := <-got
			if a.l == nil {
				t.FailNow()
			}
			if a.i != want {
				t.Errorf("waiter %d acquired as number %d; want arrival order", a.i, want)
			}
			synctest.Wait()
			if err := a.l.Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("the handoffs took %v; want each at once (the poll interval is 1h)", d)
		}
		if n := cc.attempts.Load() - before; n != waiters {
			t.Errorf("%d attempts for %d handoffs within one client; want one each", n, waiters)
		}
	})
}

func TestAcquire_waiterForTurnHonoursStrategy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		c, cc := openCounting(t, store)
		other := openMemory(t, store)
		ctx := context.Background()
		mustAcquire(t, other, "k", lock.WithTTL(time.Hour))

		// The first waiter holds the turn for a minute; the second,
		// limited to 3 attempts 100ms apart, queues behind it and gives up
		// after two delays without trying the backend.
		first := make(chan error, 1)
		go func() {
			fctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			_, err := c.Acquire(fctx, "k", lock.WithRetry(lock.FixedDelay(time.Hour)))
			first <- err
		}()
		synctest.Wait()
		before := cc.attempts.Load()
		start := time.Now()
		_, err := c.Acquire(ctx, "k", lock.WithRetry(lock.LimitAttempts(lock.FixedDelay(100*ms), 3)))
		if !errors.Is(err, lock.ErrNotAcquired) {
			t.Errorf("err = %v, want ErrNotAcquired", err)
		}
		if d := time.Since(start); d < 100*ms || d > 200*ms {
			t.Errorf("gave up after %v; want after two delays of 50-100ms", d)
		}
		if n := cc.attempts.Load() - before; n != 0 {
			t.Errorf("%d attempts while another call held the turn, want 0", n)
		}
		if err := <-first; !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("first waiter: err = %v, want DeadlineExceeded", err)
		}
	})
}

func TestAcquire_turnPassesWhenItsHolderGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		c, cc := openCounting(t, store)
		other := openMemory(t, store)
		ctx := context.Background()
		held := mustAcquire(t, other, "k", lock.WithTTL(time.Hour))

		fctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() {
			if _, err := c.Acquire(fctx, "k", lock.WithRetry(lock.FixedDelay(time.Hour))); !errors.Is(err, context.Canceled) {
				t.Errorf("first waiter: err = %v, want Canceled", err)
			}
		})
		synctest.Wait()
		second := make(chan error, 1)
		go func() {
			l, err := c.Acquire(ctx, "k", lock.WithRetry(lock.FixedDelay(time.Hour)))
			if err == nil {
				err = l.Release(ctx)
			}
			second <- err
		}()
		synctest.Wait()
		before := cc.attempts.Load()
		cancel()
		wg.Wait()
		synctest.Wait()
		// The second takes the turn, tries at once, and subscribes.
		if n := cc.attempts.Load() - before; n != 2 {
			t.Errorf("%d attempts when the turn passed, want 2 (one, and one after subscribing)", n)
		}
		start := time.Now()
		if err := held.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-second; err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("second waiter acquired %v after the release, want at once", d)
		}
		if n := lock.Queues(c); n != 0 {
			t.Errorf("%d queues left after all waiters returned, want 0", n)
		}
	})
}

func TestAcquire_queuesBehindWaitingCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A goroutine that releases the key and asks for it again at once
		// does not overtake the call that waited for it.
		store := memory.New()
		c, _ := openCounting(t, store)
		ctx := context.Background()
		opts := []lock.Option{lock.WithTTL(time.Hour), lock.WithRetry(lock.FixedDelay(time.Hour))}
		first := mustAcquire(t, c, "k", opts...)
		order := make(chan string, 2)
		var wg sync.WaitGroup
		acquire := func(name string) {
			l, err := c.Acquire(ctx, "k", opts...)
			if err != nil {
				t.Error(err)
				return
			}
			order <- name
			synctest.Wait()
			l.Release(ctx)
		}
		wg.Go(func() { acquire("waiter") })
		synctest.Wait()
		if err := first.Release(ctx); err != nil {
			t.Fatal(err)
		}
		acquire("releaser")
		wg.Wait()
		if a, b := <-order, <-order; a != "waiter" || b != "releaser" {
			t.Errorf("acquired in the order %s, %s; want the waiter first", a, b)
		}
		if n := lock.Queues(c); n != 0 {
			t.Errorf("%d queues left, want 0", n)
		}
	})
}

func TestRelease_handsOverToWaitingCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		c, tc := openTransfer(t, store, nil)
		ctx := context.Background()
		const ttl = time.Minute
		opts := []lock.Option{lock.WithTTL(ttl), lock.WithRetry(lock.FixedDelay(time.Hour))}
		holder := mustAcquire(t, c, "k", opts...)
		first, _ := holder.Token()

		const waiters = 3
		got := startWaiters(t, c, "k", waiters, opts...)
		before := tc.attempts.Load()
		prev := holder
		for i := range waiters {
			released := time.Now()
			if err := prev.Release(ctx); err != nil {
				t.Fatal(err)
			}
			l := (<-got).l
			if l == nil {
				t.FailNow()
			}
			tok, _ := l.Token()
			if want := first + fencing.Token(i+1); tok != want {
				t.Errorf("handover %d: token %d, want %d", i, tok, want)
			}
			if got, want := l.ValidUntil(), released.Add(ttl-driftOf(ttl, lock.DefaultDriftFactor)); !got.Equal(want) {
				t.Errorf("handover %d: ValidUntil %v after the release, want %v", i, got.Sub(released), want.Sub(released))
			}
			if err := prev.Release(ctx); !errors.Is(err, lock.ErrNotHeld) {
				t.Errorf("second Release of the lock handed over = %v, want ErrNotHeld", err)
			}
			prev = l
			synctest.Wait()
		}
		if n := tc.attempts.Load() - before; n != 0 {
			t.Errorf("%d attempts for %d handoffs, want none: each lock was handed over", n, waiters)
		}
		if n := tc.transfers.Load(); n != waiters {
			t.Errorf("%d transfers, want %d", n, waiters)
		}
		if err := prev.Release(ctx); err != nil {
			t.Fatal(err)
		}
		// The last release, with nobody waiting, freed the key.
		mustAcquire(t, openMemory(t, store), "k")
		if got, want := c.Stats(), (lock.Stats{Acquired: 1 + waiters, Released: 1 + waiters, Contended: 1}); got.Acquired != want.Acquired || got.Released != want.Released {
			t.Errorf("Stats = %+v, want Acquired and Released %d", got, 1+waiters)
		}
	})
}

func TestRelease_handoverStreakIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		c, tc := openTransfer(t, store, nil)
		ctx := context.Background()
		opts := []lock.Option{lock.WithTTL(time.Hour), lock.WithRetry(lock.FixedDelay(time.Hour))}
		prev := mustAcquire(t, c, "k", opts...)
		const waiters = 12
		got := startWaiters(t, c, "k", waiters, opts...)
		// A handoff every 3ms: the run of handovers that starts with the
		// first lock (acquired at 0) ends with the release that comes 20ms
		// later or more, at 21ms, the 7th, which is a release; the next run
		// starts with the 8th, from the 7th's lock, acquired at 21ms.
		for range waiters {
			time.Sleep(3 * time.Millisecond)
			if err := prev.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if prev = (<-got).l; prev == nil {
				t.FailNow()
			}
			synctest.Wait()
		}
		prev.Release(ctx)
		if n := tc.transfers.Load(); n != waiters-1 {
			t.Errorf("%d transfers for %d handoffs, want %d: one release after 20ms of handovers", n, waiters, waiters-1)
		}
		// A lock held longer than the window is released as usual.
		long := mustAcquire(t, c, "k", opts...)
		got = startWaiters(t, c, "k", 1, opts...)
		time.Sleep(20 * time.Millisecond)
		before := tc.transfers.Load()
		long.Release(ctx)
		if l := (<-got).l; l != nil {
			l.Release(ctx)
		}
		if n := tc.transfers.Load() - before; n != 0 {
			t.Errorf("a lock held for 20ms was handed over; want it released")
		}
	})
}

func TestRelease_handoverToCallThatGaveUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		unblock := make(chan struct{})
		c, _ := openTransfer(t, store, unblock)
		ctx := context.Background()
		opts := []lock.Option{lock.WithTTL(time.Hour), lock.WithRetry(lock.FixedDelay(time.Hour))}
		holder := mustAcquire(t, c, "k", opts...)
		wctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() {
			if _, err := c.Acquire(wctx, "k", opts...); !errors.Is(err, context.Canceled) {
				t.Errorf("waiter: err = %v, want Canceled", err)
			}
		})
		synctest.Wait()
		released := make(chan error, 1)
		go func() { released <- holder.Release(ctx) }()
		synctest.Wait() // the transfer is under way, and blocked
		cancel()
		wg.Wait() // the waiter gave up during the transfer
		close(unblock)
		if err := <-released; err != nil {
			t.Errorf("Release = %v", err)
		}
		// The key went to the waiter, which had gone: it was given back.
		if _, ok, _ := inspect(t, store, "k"); ok {
			t.Error("the key is held after the waiter gave up; want it given back")
		}
		if n := lock.Queues(c); n != 0 {
			t.Errorf("%d queues left, want 0", n)
		}
	})
}

func TestRelease_expiredLockIsNotHandedOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		c, tc := openTransfer(t, store, nil)
		ctx := context.Background()
		holder := mustAcquire(t, c, "k", lock.WithTTL(lock.MinTTL))
		got := startWaiters(t, c, "k", 1, lock.WithRetry(lock.FixedDelay(time.Hour)))
		time.Sleep(15 * time.Millisecond) // the holder's lease ran out, within the handover window
		start := time.Now()
		if err := holder.Release(ctx); !errors.Is(err, lock.ErrNotHeld) {
			t.Errorf("Release of an expired lock = %v, want ErrNotHeld", err)
		}
		l := (<-got).l
		if l == nil {
			t.FailNow()
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("the waiter acquired %v after the failed handover, want at once", d)
		}
		if n := tc.transfers.Load(); n != 1 {
			t.Errorf("%d transfers, want 1 (refused)", n)
		}
		if err := l.Release(ctx); err != nil {
			t.Error(err)
		}
	})
}

// inspect reports whether key is held in store.
func inspect(t *testing.T, store *memory.Store, key string) (driver.Holder, bool, error) {
	t.Helper()
	dc, err := store.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return dc.(driver.Inspector).Inspect(context.Background(), key)
}

// leaseTransferConn is a transferConn that is also a driver.LeaseConn and
// a driver.LeaseTransferer. It numbers the leases it hands out and
// records the numbers it is handed back.
type leaseTransferConn struct {
	*transferConn
	mu     sync.Mutex
	last   int
	handed []int
}

func (c *leaseTransferConn) stamp(l driver.Lease, err error) (driver.Lease, error) {
	if err != nil {
		return l, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last++
	l.State = c.last
	return l, nil
}

func (c *leaseTransferConn) back(l driver.Lease) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.handed = append(c.handed, l.State.(int))
}

func (c *leaseTransferConn) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	return c.stamp(c.transferConn.Acquire(ctx, key, value, ttl))
}

func (c *leaseTransferConn) ExtendLease(ctx context.Context, key, value string, l driver.Lease, ttl time.Duration) (driver.Lease, error) {
	c.back(l)
	return c.stamp(l, c.Conn.(driver.Extender).Extend(ctx, key, value, ttl))
}

func (c *leaseTransferConn) ReleaseLease(ctx context.Context, key, value string, l driver.Lease) error {
	c.back(l)
	return c.Conn.Release(ctx, key, value)
}

func (c *leaseTransferConn) TransferLease(ctx context.Context, key, value string, l driver.Lease, next string, ttl time.Duration) (driver.Lease, error) {
	c.back(l)
	return c.stamp(c.transferConn.Transfer(ctx, key, value, next, ttl))
}

// TestRelease_handsOverWithTheLease: on a driver.LeaseTransferer, the
// handover hands the driver the grant's latest lease, and the lock handed
// over is released with the lease the transfer returned.
func TestRelease_handsOverWithTheLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		dc, err := store.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		lc := &leaseTransferConn{transferConn: &transferConn{countingConn: &countingConn{Conn: dc}}}
		c := lock.OpenConnector(&scriptedConnector{conn: lc})
		c.SetLogger(quiet)
		defer c.Close()
		ctx := context.Background()
		opts := []lock.Option{lock.WithTTL(time.Minute), lock.WithRetry(lock.FixedDelay(time.Hour))}
		holder := mustAcquire(t, c, "k", opts...)               // lease 1
		if err := holder.Extend(ctx, time.Minute); err != nil { // hands back 1, gets 2
			t.Fatal(err)
		}
		got := startWaiters(t, c, "k", 1, opts...)
		if err := holder.Release(ctx); err != nil { // hands back 2, the waiter's lease is 3
			t.Fatal(err)
		}
		l := (<-got).l
		if l == nil {
			t.FailNow()
		}
		if err := l.Release(ctx); err != nil { // hands back 3
			t.Fatal(err)
		}
		if n := lc.transfers.Load(); n != 1 {
			t.Errorf("%d transfers, want 1", n)
		}
		lc.mu.Lock()
		defer lc.mu.Unlock()
		if want := []int{1, 2, 3}; !slices.Equal(lc.handed, want) {
			t.Errorf("leases handed back %v, want %v", lc.handed, want)
		}
	})
}
