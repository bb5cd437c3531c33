package lock_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"testing"
	"testing/synctest"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/memory"
)

// --- TryAcquire ------------------------------------------------------------

func TestTryAcquire_validUntilIsStartPlusTTLMinusDrift(t *testing.T) {
	tests := []struct {
		name   string
		ttl    time.Duration
		opts   []lock.Option
		delay  time.Duration // how long the driver takes to answer
		factor float64
	}{
		{"instant answer", 10 * time.Second, nil, 0, lock.DefaultDriftFactor},
		{"slow answer", 10 * time.Second, nil, 3 * time.Second, lock.DefaultDriftFactor},
		{"answer 1ns before the validity ends", time.Second, nil, time.Second - 12*ms - 1, lock.DefaultDriftFactor},
		{"drift factor zero", time.Second, []lock.Option{lock.WithDriftFactor(0)}, 100 * ms, 0},
		{"drift factor a quarter", time.Second, []lock.Option{lock.WithDriftFactor(0.25)}, 100 * ms, 0.25},
		{"MinTTL", lock.MinTTL, nil, ms, lock.DefaultDriftFactor},
		{"MaxTTL", lock.MaxTTL, nil, time.Hour, lock.DefaultDriftFactor},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sc := &scriptedConn{onAcquire: func(context.Context, int, string) (driver.Lease, error) {
					time.Sleep(tt.delay)
					return driver.Lease{}, nil
				}}
				c := openScripted(t, sc, false)
				start := time.Now()
				l, err := c.TryAcquire(context.Background(), "k", append(tt.opts, lock.WithTTL(tt.ttl))...)
				if err != nil {
					t.Fatalf("TryAcquire: %v", err)
				}
				if got := time.Since(start); got != tt.delay {
					t.Fatalf("TryAcquire took %v, want the driver's %v", got, tt.delay)
				}
				want := start.Add(tt.ttl - driftOf(tt.ttl, tt.factor))
				if got := l.ValidUntil(); !got.Equal(want) {
					t.Errorf("ValidUntil = start+%v, want start+%v (ttl %v - drift %v, from before the call)",
						got.Sub(start), want.Sub(start), tt.ttl, driftOf(tt.ttl, tt.factor))
				}
			})
		})
	}
}

func TestTryAcquire_answerAfterValidityFails(t *testing.T) {
	const ttl = time.Second
	validity := ttl - driftOf(ttl, lock.DefaultDriftFactor)
	for _, delay := range []time.Duration{validity, validity + 1, ttl, 5 * time.Second} {
		t.Run(delay.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sc := &scriptedConn{onAcquire: func(context.Context, int, string) (driver.Lease, error) {
					time.Sleep(delay)
					return driver.Lease{}, nil
				}}
				c := openScripted(t, sc, false)
				l, err := c.TryAcquire(context.Background(), "k", lock.WithTTL(ttl))
				if err == nil || l != nil {
					t.Fatalf("TryAcquire = %v, %v; want an error: the answer came after the validity", l, err)
				}
				if errors.Is(err, lock.ErrNotAcquired) {
					t.Errorf("err = %v matches ErrNotAcquired; nobody else holds the key", err)
				}
				acq, rel := sc.acquireCalls(), sc.releaseCalls()
				if len(rel) != 1 || rel[0].value != acq[0].value || rel[0].key != "k" {
					t.Errorf("releases = %+v; want one cleanup release of value %q", rel, acq[0].value)
				}
				if got, want := c.Stats(), (lock.Stats{Failed: 1}); got != want {
					t.Errorf("Stats = %+v, want %+v", got, want)
				}
			})
		})
	}
}

func TestTryAcquire_backendError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sc := &scriptedConn{onAcquire: func(context.Context, int, string) (driver.Lease, error) {
		cancel() // the caller gives up while the request is out
		return driver.Lease{}, fmt.Errorf("node 1: %w", errBackendDown)
	}}
	c := openScripted(t, sc, false)
	l, err := c.TryAcquire(ctx, "k")
	if l != nil || err == nil {
		t.Fatalf("TryAcquire = %v, %v; want the backend's error", l, err)
	}
	if errors.Is(err, lock.ErrNotAcquired) {
		t.Errorf("err = %v matches ErrNotAcquired; a backend error must not", err)
	}
	if !errors.Is(err, errBackendDown) {
		t.Errorf("err = %v; errors.Is does not reach the backend's error", err)
	}
	var be *backendError
	if !errors.As(err, &be) || be != errBackendDown {
		t.Errorf("errors.As(err, *backendError) = %v; want the backend's error", be)
	}
	// The caller's context is done: the cleanup goes on in the background.
	for start := time.Now(); len(sc.releaseCalls()) == 0 && time.Since(start) < 5*time.Second; {
		time.Sleep(time.Millisecond)
	}
	acq, rel := sc.acquireCalls(), sc.releaseCalls()
	if len(rel) != 1 {
		t.Fatalf("releases = %+v, want one cleanup release", rel)
	}
	if rel[0].value != acq[0].value {
		t.Errorf("cleanup released value %q, want the attempt's %q", rel[0].value, acq[0].value)
	}
	if rel[0].ctxErr != nil {
		t.Errorf("cleanup ran under a context that was already done (%v); want its own", rel[0].ctxErr)
	}
	if !rel[0].hasDeadline {
		t.Error("cleanup ran under a context without a deadline; want its own short timeout")
	}
	if got, want := c.Stats(), (lock.Stats{Failed: 1}); got != want {
		t.Errorf("Stats = %+v, want %+v", got, want)
	}
}

func TestTryAcquire_heldGivesErrNotAcquired(t *testing.T) {
	wrapped := fmt.Errorf("3 of 5 nodes: %w", driver.ErrHeld)
	for _, held := range []error{driver.ErrHeld, wrapped} {
		t.Run(held.Error(), func(t *testing.T) {
			sc := &scriptedConn{onAcquire: func(context.Context, int, string) (driver.Lease, error) {
				return driver.Lease{}, held
			}}
			c := openScripted(t, sc, false)
			_, err := c.TryAcquire(context.Background(), "k")
			if !errors.Is(err, lock.ErrNotAcquired) {
				t.Errorf("err = %v, want ErrNotAcquired", err)
			}
			// A wrapped sentinel says more than the sentinel: keep it.
			if held != driver.ErrHeld && !errors.Is(err, held) {
				t.Errorf("err = %v; the driver's error is not reachable", err)
			}
			if got, want := c.Stats(), (lock.Stats{Contended: 1}); got != want {
				t.Errorf("Stats = %+v, want %+v", got, want)
			}
		})
	}
}

func TestTryAcquire_freshValueEachTime(t *testing.T) {
	sc := &scriptedConn{}
	c := openScripted(t, sc, false)
	const n = 1000
	for range n {
		mustAcquire(t, c, "k")
	}
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]{27}$`)
	seen := make(map[string]bool, n)
	for _, a := range sc.acquireCalls() {
		if !valid.MatchString(a.value) {
			t.Fatalf("value %q is not 27 characters of URL-safe base64", a.value)
		}
		if b, err := base64.RawURLEncoding.DecodeString(a.value); err != nil || len(b) != 20 {
			t.Fatalf("value %q decodes to %d bytes, %v; want 20 random bytes", a.value, len(b), err)
		}
		if seen[a.value] {
			t.Fatalf("value %q used twice", a.value)
		}
		seen[a.value] = true
	}
	if len(seen) != n {
		t.Errorf("%d distinct values over %d acquisitions", len(seen), n)
	}
}

// --- Acquire: waiting ------------------------------------------------------

func TestAcquire_wakesOnRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		a, b := openMemory(t, store), openMemory(t, store)
		ctx := context.Background()
		la := mustAcquire(t, a, "k", lock.WithTTL(time.Hour))

		type result struct {
			l   *lock.Lock
			err error
			at  time.Time
		}
		done := make(chan result, 1)
		go func() {
			l, err := b.Acquire(ctx, "k", lock.WithRetry(lock.FixedDelay(time.Hour)))
			done <- result{l, err, time.Now()}
		}()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		select {
		case r := <-done:
			t.Fatalf("Acquire returned %v, %v while the key was held", r.l, r.err)
		default:
		}
		released := time.Now()
		if err := la.Release(ctx); err != nil {
			t.Fatal(err)
		}
		r := <-done
		if r.err != nil {
			t.Fatalf("Acquire: %v", r.err)
		}
		if !r.at.Equal(released) {
			t.Errorf("waiter acquired %v after the release; want at once (its poll interval is 1h)", r.at.Sub(released))
		}
		if err := r.l.Release(ctx); err != nil {
			t.Error(err)
		}
	})
}

func TestAcquire_retriesRightAfterSubscribing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The key is released between the failed attempt and the
		// subscription: no wake-up will come, so Acquire must try again
		// once subscribed instead of sleeping for its 1h delay.
		sc := &scriptedConn{onAcquire: func(_ context.Context, n int, _ string) (driver.Lease, error) {
			if n == 1 {
				return driver.Lease{}, driver.ErrHeld
			}
			return driver.Lease{}, nil
		}}
		wc := &waitingConn{scriptedConn: sc}
		c := lock.OpenConnector(&scriptedConnector{conn: wc})
		defer c.Close()
		start := time.Now()
		if _, err := c.Acquire(context.Background(), "k", lock.WithRetry(lock.FixedDelay(time.Hour))); err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != 0 {
			t.Errorf("Acquire took %v; want an attempt right after subscribing", got)
		}
		synctest.Wait() // watches are closed in the background
		if w, o := wc.watches.Load(), wc.open.Load(); w != 1 || o != 0 {
			t.Errorf("%d watches opened, %d left open; want 1 opened and closed", w, o)
		}
	})
}

func TestAcquire_closesWatchWhenGivingUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		wc := &waitingConn{scriptedConn: &scriptedConn{onAcquire: heldAlways}}
		c := lock.OpenConnector(&scriptedConnector{conn: wc})
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := c.Acquire(ctx, "k", lock.WithRetry(lock.FixedDelay(100*ms)))
		if !errors.Is(err, lock.ErrNotAcquired) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want ErrNotAcquired and DeadlineExceeded", err)
		}
		if n := len(wc.acquireCalls()); n < 10 {
			t.Errorf("%d attempts in 1s at 50-100ms; a Waiter must not stop polling", n)
		}
		synctest.Wait() // watches are closed in the background
		if w, o := wc.watches.Load(), wc.open.Load(); w != 1 || o != 0 {
			t.Errorf("%d watches opened, %d left open; want 1 opened and closed", w, o)
		}
	})
}

func TestAcquire_expiredHolderFoundByPolling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		a, b := openMemory(t, store), openMemory(t, store)
		start := time.Now()
		mustAcquire(t, a, "k", lock.WithTTL(time.Second)) // never released
		if _, err := b.Acquire(context.Background(), "k", lock.WithRetry(lock.FixedDelay(100*ms))); err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got < time.Second || got > time.Second+100*ms {
			t.Errorf("acquired after %v; want within one poll (100ms) of the expiry at 1s", got)
		}
	})
}

func TestAcquire_pollsAtStrategyPaceWithoutWaiter(t *testing.T) {
	tests := []struct {
		name    string
		s       lock.RetryStrategy
		nominal func(attempt int) time.Duration
	}{
		{"FixedDelay", lock.FixedDelay(100 * ms), func(int) time.Duration { return 100 * ms }},
		{"LinearBackoff", lock.LinearBackoff(100*ms, 250*ms), func(a int) time.Duration { return min(time.Duration(a)*100*ms, 250*ms) }},
		{"ExponentialBackoff", lock.ExponentialBackoff(100*ms, 500*ms), func(a int) time.Duration { return min(100*ms<<(a-1), 500*ms) }},
	}
	const heldFor = 5 // attempts
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sc := &scriptedConn{onAcquire: func(_ context.Context, n int, _ string) (driver.Lease, error) {
					if n <= heldFor {
						return driver.Lease{}, driver.ErrHeld
					}
					return driver.Lease{}, nil
				}}
				c := openScripted(t, sc, false)
				if _, err := c.Acquire(context.Background(), "k", lock.WithRetry(tt.s)); err != nil {
					t.Fatal(err)
				}
				calls := sc.acquireCalls()
				if len(calls) != heldFor+1 {
					t.Fatalf("%d attempts, want %d", len(calls), heldFor+1)
				}
				for i := 1; i < len(calls); i++ {
					checkJitter(t, i, calls[i].at.Sub(calls[i-1].at), tt.nominal(i))
				}
				if got, want := c.Stats(), (lock.Stats{Contended: heldFor, Acquired: 1}); got != want {
					t.Errorf("Stats = %+v, want %+v", got, want)
				}
			})
		})
	}
}

func TestAcquire_retriesBackendErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := &scriptedConn{onAcquire: func(_ context.Context, n int, _ string) (driver.Lease, error) {
			if n <= 2 {
				return driver.Lease{}, errBackendDown
			}
			return driver.Lease{}, nil
		}}
		c := openScripted(t, sc, false)
		l, err := c.Acquire(context.Background(), "k", lock.WithRetry(lock.FixedDelay(100*ms)))
		if err != nil {
			t.Fatalf("Acquire: %v; want success on the third attempt", err)
		}
		acq := sc.acquireCalls()
		if len(acq) != 3 {
			t.Fatalf("%d attempts, want 3", len(acq))
		}
		for i := 1; i < len(acq); i++ {
			checkJitter(t, i, acq[i].at.Sub(acq[i-1].at), 100*ms)
		}
		rel := sc.releaseCalls()
		if len(rel) != 2 || rel[0].value != acq[0].value || rel[1].value != acq[1].value {
			t.Errorf("releases = %+v; want cleanups of the two failed attempts' values", rel)
		}
		if err := l.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
		if rel := sc.releaseCalls(); len(rel) != 3 || rel[2].value != acq[2].value {
			t.Errorf("releases = %+v; the lock should hold the third attempt's value", rel)
		}
		if got, want := c.Stats(), (lock.Stats{Failed: 2, Acquired: 1, Released: 1}); got != want {
			t.Errorf("Stats = %+v, want %+v", got, want)
		}
	})
}

// acquireAndRelease acquires key on c in the background, waiting with
// opts, releases the lock, and sends Acquire's error.
func acquireAndRelease(c *lock.Client, key string, opts ...lock.Option) <-chan error {
	done := make(chan error, 1)
	go func() {
		l, err := c.Acquire(context.Background(), key, opts...)
		if err == nil {
			l.Release(context.Background())
		}
		done <- err
	}()
	return done
}

// TestAcquire_backendErrorAfterAWakeUpRetriesSoon: an attempt made at a
// release's announcement that the backend fails (its connection broke
// while the waiter slept, say) is retried after 10ms, then 20ms, ..., not
// after the strategy's delay: the release will not be announced again.
// Failures that follow no wake-up keep the strategy's delay.
func TestAcquire_backendErrorAfterAWakeUpRetriesSoon(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Attempts 1 and 2 (before and after subscribing) find the key
		// held, 3 fails with no wake-up before it, 4 to 6 fail after a
		// release's announcement, 7 succeeds.
		sc := &scriptedConn{onAcquire: func(_ context.Context, n int, _ string) (driver.Lease, error) {
			switch {
			case n <= 2:
				return driver.Lease{}, driver.ErrHeld
			case n <= 6:
				return driver.Lease{}, errBackendDown
			}
			return driver.Lease{}, nil
		}}
		ac := &announcingConn{scriptedConn: sc, released: make(chan struct{}, 1)}
		c := lock.OpenConnector(&scriptedConnector{conn: ac})
		c.SetLogger(quiet)
		defer c.Close()

		const poll = time.Minute
		done := acquireAndRelease(c, "k", lock.WithRetry(lock.FixedDelay(poll)))
		synctest.Wait() // attempts 1 and 2; asleep for up to a minute
		for len(sc.acquireCalls()) < 3 {
			time.Sleep(time.Second)
			synctest.Wait()
		}
		// Attempt 3, after the strategy's delay, failed: asleep again.
		if n := len(sc.acquireCalls()); n != 3 {
			t.Fatalf("%d attempts before the announcement, want 3", n)
		}
		ac.released <- struct{}{}
		if err := <-done; err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		acq := sc.acquireCalls()
		if len(acq) != 7 {
			t.Fatalf("%d attempts, want 7", len(acq))
		}
		checkJitter(t, 2, acq[2].at.Sub(acq[1].at), poll)
		for i, want := range []time.Duration{10 * ms, 20 * ms, 40 * ms} {
			if got := acq[i+4].at.Sub(acq[i+3].at); got != want {
				t.Errorf("attempt %d came %v after the failure before it, want %v", i+5, got, want)
			}
		}
	})
}

// TestAcquire_failedSubscriptionIsRetriedSoon: a waiter whose subscription
// to releases failed hears of no release, so it tries again after 10ms,
// 20ms, ... rather than at the strategy's pace; and backs off that way if
// subscribing keeps failing, rather than hammer the backend.
func TestAcquire_failedSubscriptionIsRetriedSoon(t *testing.T) {
	held := func(_ context.Context, n int, _ string) (driver.Lease, error) {
		return driver.Lease{}, driver.ErrHeld
	}
	const poll = time.Minute
	t.Run("fails twice", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sc := &scriptedConn{onAcquire: func(_ context.Context, n int, _ string) (driver.Lease, error) {
				if n <= 4 {
					return driver.Lease{}, driver.ErrHeld
				}
				return driver.Lease{}, nil
			}}
			uc := &unsubscribableConn{announcingConn: &announcingConn{scriptedConn: sc, released: make(chan struct{}, 1)}, fail: 2}
			c := lock.OpenConnector(&scriptedConnector{conn: uc})
			c.SetLogger(quiet)
			defer c.Close()
			done := acquireAndRelease(c, "k", lock.WithRetry(lock.FixedDelay(poll)))
			synctest.Wait()
			time.Sleep(time.Second)
			synctest.Wait()
			// Attempt 1, subscription failed; 10ms: attempt 2, failed again;
			// 20ms: attempt 3, subscribed; attempt 4 at once; asleep.
			acq := sc.acquireCalls()
			if len(acq) != 4 || uc.watches.Load() != 3 {
				t.Fatalf("%d attempts and %d subscriptions before the announcement, want 4 and 3", len(acq), uc.watches.Load())
			}
			for i, want := range []time.Duration{10 * ms, 20 * ms, 0} {
				if got := acq[i+1].at.Sub(acq[i].at); got != want {
					t.Errorf("attempt %d came %v after the one before it, want %v", i+2, got, want)
				}
			}
			uc.released <- struct{}{}
			if err := <-done; err != nil {
				t.Fatalf("Acquire: %v", err)
			}
			if n := len(sc.acquireCalls()); n != 5 {
				t.Errorf("%d attempts, want 5", n)
			}
		})
	})
	t.Run("always fails", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sc := &scriptedConn{onAcquire: held}
			uc := &unsubscribableConn{announcingConn: &announcingConn{scriptedConn: sc}, fail: -1}
			c := lock.OpenConnector(&scriptedConnector{conn: uc})
			c.SetLogger(quiet)
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := c.Acquire(ctx, "k", lock.WithRetry(lock.FixedDelay(poll))); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Acquire = %v, want the deadline's error", err)
			}
			// Attempts at 0, 10ms, 30ms, 70ms, ... 5.11s; the next would be at
			// 10.23s.
			if n := len(sc.acquireCalls()); n != 10 {
				t.Errorf("%d attempts in 10s, want 10: the retries of a failing subscription must back off", n)
			}
		})
	})
}

func TestAcquire_contextDeadlineEndsWait(t *testing.T) {
	tests := []struct {
		name     string
		open     func(t *testing.T) *lock.Client
		wantLast error // the last attempt's cause
		notLast  error
	}{
		{
			name: "key held",
			open: func(t *testing.T) *lock.Client {
				store := memory.New()
				mustAcquire(t, openMemory(t, store), "k", lock.WithTTL(time.Hour))
				return openMemory(t, store)
			},
			wantLast: lock.ErrNotAcquired,
			notLast:  errBackendDown,
		},
		{
			name: "backend down",
			open: func(t *testing.T) *lock.Client {
				return openScripted(t, &scriptedConn{onAcquire: func(context.Context, int, string) (driver.Lease, error) {
					return driver.Lease{}, errBackendDown
				}}, false)
			},
			wantLast: errBackendDown,
			notLast:  lock.ErrNotAcquired,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := tt.open(t)
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				start := time.Now()
				l, err := c.Acquire(ctx, "k", lock.WithRetry(lock.FixedDelay(300*ms)))
				if l != nil {
					t.Fatal("Acquire succeeded")
				}
				if got := time.Since(start); got != time.Second {
					t.Errorf("Acquire gave up after %v, want at the deadline (1s)", got)
				}
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("err = %v, want it to match context.DeadlineExceeded", err)
				}
				if !errors.Is(err, tt.wantLast) {
					t.Errorf("err = %v, want it to match the last cause %v", err, tt.wantLast)
				}
				if errors.Is(err, tt.notLast) {
					t.Errorf("err = %v matches %v", err, tt.notLast)
				}
				var e *lock.Error
				if !errors.As(err, &e) || e.Op != "acquire" || e.Key != "k" {
					t.Errorf("err = %#v, want a *lock.Error for acquire k", err)
				}
			})
		})
	}
}

func TestAcquire_cancelCauseStillMatchesContextError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		mustAcquire(t, openMemory(t, store), "k", lock.WithTTL(time.Hour))
		c := openMemory(t, store)
		errShutdown := errors.New("shutting down")
		ctx, cancel := context.WithTimeoutCause(context.Background(), time.Second, errShutdown)
		defer cancel()
		_, err := c.Acquire(ctx, "k", lock.WithRetry(lock.FixedDelay(300*ms)))
		for _, want := range []error{context.DeadlineExceeded, errShutdown, lock.ErrNotAcquired} {
			if !errors.Is(err, want) {
				t.Errorf("err = %v, want it to match %v", err, want)
			}
		}
	})
}

func TestAcquire_cancelledContextMakesNoAttempt(t *testing.T) {
	sc := &scriptedConn{}
	c := openScripted(t, sc, false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, acquire := range map[string]func(context.Context, string, ...lock.Option) (*lock.Lock, error){
		"Acquire": c.Acquire, "TryAcquire": c.TryAcquire,
	} {
		if _, err := acquire(ctx, "k"); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err = %v, want context.Canceled", name, err)
		}
	}
	if n := len(sc.acquireCalls()); n != 0 {
		t.Errorf("driver called %d times under a cancelled context, want 0", n)
	}
}

func TestAcquire_limitAttemptsReturnsLastCause(t *testing.T) {
	held := func() (driver.Lease, error) { return driver.Lease{}, driver.ErrHeld }
	down := func() (driver.Lease, error) { return driver.Lease{}, errBackendDown }
	tests := []struct {
		name     string
		script   []func() (driver.Lease, error)
		want     error
		unwanted error
	}{
		{"held, held, down", []func() (driver.Lease, error){held, held, down}, errBackendDown, lock.ErrNotAcquired},
		{"down, down, held", []func() (driver.Lease, error){down, down, held}, lock.ErrNotAcquired, errBackendDown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sc := &scriptedConn{onAcquire: func(_ context.Context, n int, _ string) (driver.Lease, error) {
					return tt.script[min(n, len(tt.script))-1]()
				}}
				c := openScripted(t, sc, false)
				start := time.Now()
				_, err := c.Acquire(context.Background(), "k",
					lock.WithRetry(lock.LimitAttempts(lock.FixedDelay(time.Minute), len(tt.script))))
				if !errors.Is(err, tt.want) || errors.Is(err, tt.unwanted) {
					t.Errorf("err = %v, want the last cause %v only", err, tt.want)
				}
				if n := len(sc.acquireCalls()); n != len(tt.script) {
					t.Errorf("%d attempts, want %d", n, len(tt.script))
				}
				if got := time.Since(start); got > 2*time.Minute {
					t.Errorf("Acquire took %v; it should stop right after the last attempt", got)
				}
			})
		})
	}
}

func TestOpen_defaultOptionsAndTheirOverride(t *testing.T) {
	c, err := lock.Open("memory", "defaults-test", lock.WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	l, err := c.TryAcquire(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Until(l.ValidUntil()); d < 50*time.Second {
		t.Errorf("a lock taken with the client's default TTL of 1m is valid for %v", d)
	}
	l2, err := c.TryAcquire(ctx, "override", lock.WithTTL(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Until(l2.ValidUntil()); d > time.Second {
		t.Errorf("a call's own TTL of 1s did not override the default: valid for %v", d)
	}
	if _, err := lock.Open("memory", "defaults-test", lock.WithTTL(time.Nanosecond)); !errors.Is(err, lock.ErrInvalidTTL) {
		t.Errorf("Open with a bad default TTL = %v, want ErrInvalidTTL", err)
	}
	bad := lock.OpenConnector(memory.New(), nil)
	defer bad.Close()
	if _, err := bad.TryAcquire(ctx, "k"); !errors.Is(err, lock.ErrInvalidOption) {
		t.Errorf("TryAcquire on a client opened with a nil default = %v, want ErrInvalidOption", err)
	}
}

func TestInspect_unsupportedAndHeld(t *testing.T) {
	c := openScripted(t, &scriptedConn{}, false)
	if _, _, err := c.Inspect(context.Background(), "k"); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Inspect on a driver without Inspector = %v, want ErrUnsupported", err)
	}
	if _, _, err := c.Inspect(context.Background(), ""); !errors.Is(err, lock.ErrInvalidKey) {
		t.Errorf("Inspect of an empty key = %v, want ErrInvalidKey", err)
	}
}
