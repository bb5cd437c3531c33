package lock_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/memory"
)

func TestLock_releaseAndExtendUseTheAcquisitionsValue(t *testing.T) {
	sc := &scriptedConn{}
	c := openScripted(t, sc, true)
	l := mustAcquire(t, c, "k", lock.WithTTL(time.Minute))
	if err := l.Extend(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	v := sc.acquireCalls()[0].value
	if e := sc.extendCalls(); len(e) != 1 || e[0].value != v || e[0].key != "k" || e[0].ttl != time.Minute {
		t.Errorf("extend calls = %+v, want one for k/%s/1m", e, v)
	}
	if r := sc.releaseCalls(); len(r) != 1 || r[0].value != v || r[0].key != "k" {
		t.Errorf("release calls = %+v, want one for k/%s", r, v)
	}
}

func TestLock_tokenFromLease(t *testing.T) {
	sc := &scriptedConn{onAcquire: func(_ context.Context, n int, _ string) (driver.Lease, error) {
		if n == 1 {
			return driver.Lease{Token: 41, Fenced: true}, nil
		}
		return driver.Lease{}, nil
	}}
	c := openScripted(t, sc, false)
	if tok, ok := mustAcquire(t, c, "k").Token(); !ok || tok != 41 {
		t.Errorf("Token() = %v, %v; want 41, true", tok, ok)
	}
	if _, ok := mustAcquire(t, c, "k").Token(); ok {
		t.Error("Token() reports a token the driver did not give")
	}
}

// --- Extend ----------------------------------------------------------------

func TestExtend_movesValidUntil(t *testing.T) {
	tests := []struct {
		name string
		ttl  time.Duration
	}{
		{"longer", 2 * time.Second},
		{"same", time.Second},
		{"shorter moves it earlier", 100 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sc := &scriptedConn{onExtend: func(context.Context, int) error {
					time.Sleep(50 * ms)
					return nil
				}}
				c := openScripted(t, sc, true)
				l := mustAcquire(t, c, "k", lock.WithTTL(time.Second), lock.WithDriftFactor(0.25))
				time.Sleep(200 * ms)
				start := time.Now()
				if err := l.Extend(context.Background(), tt.ttl); err != nil {
					t.Fatalf("Extend: %v", err)
				}
				want := start.Add(tt.ttl - driftOf(tt.ttl, 0.25))
				if got := l.ValidUntil(); !got.Equal(want) {
					t.Errorf("ValidUntil = start'+%v, want start'+%v (from before the extension, with the lock's drift factor)",
						got.Sub(start), want.Sub(start))
				}
				if e := sc.extendCalls(); len(e) != 1 || e[0].ttl != tt.ttl {
					t.Errorf("extend calls = %+v, want one with ttl %v", e, tt.ttl)
				}
				if got, want := c.Stats(), (lock.Stats{Acquired: 1, Extended: 1}); got != want {
					t.Errorf("Stats = %+v, want %+v", got, want)
				}
			})
		})
	}
}

// checkLost checks that l is known lost: Extend and Release fail with
// ErrNotHeld without calling the driver.
func checkLost(t *testing.T, l *lock.Lock, sc *scriptedConn) {
	t.Helper()
	ext, rel := len(sc.extendCalls()), len(sc.releaseCalls())
	if err := l.Extend(context.Background(), time.Second); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Extend of a lost lock: err = %v, want ErrNotHeld", err)
	}
	if err := l.Release(context.Background()); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Release of a lost lock: err = %v, want ErrNotHeld", err)
	}
	if n := len(sc.extendCalls()); n != ext {
		t.Errorf("Extend of a lost lock called the driver")
	}
	if n := len(sc.releaseCalls()); n != rel {
		t.Errorf("Release of a lost lock called the driver")
	}
}

func TestExtend_answerAfterValidityLosesAndReleases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := &scriptedConn{onExtend: func(context.Context, int) error {
			time.Sleep(600 * ms) // ignores ctx, and succeeds, too late
			return nil
		}}
		c := openScripted(t, sc, true)
		l := mustAcquire(t, c, "k", lock.WithTTL(time.Second))
		deadline := l.ValidUntil()
		time.Sleep(500 * ms)
		err := l.Extend(context.Background(), time.Second)
		if !errors.Is(err, lock.ErrNotHeld) {
			t.Fatalf("Extend: err = %v, want ErrNotHeld", err)
		}
		if e := sc.extendCalls(); len(e) != 1 || !e[0].hasDeadline {
			t.Errorf("extend calls = %+v; want one, bounded by the validity", e)
		}
		if l.ValidUntil().After(deadline) {
			t.Errorf("ValidUntil moved to %v after a late extension", l.ValidUntil().Sub(deadline))
		}
		rel := sc.releaseCalls()
		if len(rel) != 1 || rel[0].value != sc.acquireCalls()[0].value || rel[0].ctxErr != nil {
			t.Errorf("releases = %+v; want one release of the lock's value, under a live context", rel)
		}
		if got, want := c.Stats(), (lock.Stats{Acquired: 1, Lost: 1}); got != want {
			t.Errorf("Stats = %+v, want %+v", got, want)
		}
		checkLost(t, l, sc)
	})
}

func TestExtend_errorAfterValidityLosesAndReleases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := &scriptedConn{onExtend: func(ctx context.Context, _ int) error {
			<-ctx.Done() // a driver that honours ctx: the reply is lost at the deadline
			return ctx.Err()
		}}
		c := openScripted(t, sc, true)
		l := mustAcquire(t, c, "k", lock.WithTTL(time.Second))
		time.Sleep(500 * ms)
		if err := l.Extend(context.Background(), time.Second); !errors.Is(err, lock.ErrNotHeld) {
			t.Fatalf("Extend: err = %v, want ErrNotHeld", err)
		}
		if rel := sc.releaseCalls(); len(rel) != 1 || rel[0].value != sc.acquireCalls()[0].value {
			t.Errorf("releases = %+v; want the core to release the key the extension may have prolonged", rel)
		}
		if got, want := c.Stats(), (lock.Stats{Acquired: 1, Lost: 1}); got != want {
			t.Errorf("Stats = %+v, want %+v", got, want)
		}
	})
}

func TestExtend_afterValidityDoesNotCallDriver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := &scriptedConn{}
		c := openScripted(t, sc, true)
		l := mustAcquire(t, c, "k", lock.WithTTL(time.Second))
		until := l.ValidUntil()
		time.Sleep(time.Second)
		if err := l.Extend(context.Background(), time.Second); !errors.Is(err, lock.ErrNotHeld) {
			t.Errorf("Extend after ValidUntil: err = %v, want ErrNotHeld", err)
		}
		if n := len(sc.extendCalls()); n != 0 {
			t.Errorf("driver asked to extend an expired lock (%d calls)", n)
		}
		if !l.ValidUntil().Equal(until) {
			t.Errorf("ValidUntil changed by %v", l.ValidUntil().Sub(until))
		}
		if got, want := c.Stats(), (lock.Stats{Acquired: 1, Lost: 1}); got != want {
			t.Errorf("Stats = %+v, want %+v", got, want)
		}
		if err := l.Extend(context.Background(), time.Second); !errors.Is(err, lock.ErrNotHeld) || len(sc.extendCalls()) != 0 {
			t.Errorf("second Extend after ValidUntil: err = %v, %d driver calls; want ErrNotHeld and none", err, len(sc.extendCalls()))
		}
		// The backend may still hold the lease (the drift allowance):
		// Release still gives it back.
		if err := l.Release(context.Background()); err != nil || len(sc.releaseCalls()) != 1 {
			t.Errorf("Release after ValidUntil: err = %v, %d driver calls; want nil and one", err, len(sc.releaseCalls()))
		}
		if got, want := c.Stats(), (lock.Stats{Acquired: 1, Released: 1, Lost: 1}); got != want {
			t.Errorf("Stats = %+v, want %+v (a loss is counted once)", got, want)
		}
	})
}

func TestExtend_notHeld(t *testing.T) {
	for _, notHeld := range []error{driver.ErrNotHeld, fmt.Errorf("script: %w", driver.ErrNotHeld)} {
		t.Run(notHeld.Error(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sc := &scriptedConn{onExtend: func(context.Context, int) error { return notHeld }}
				c := openScripted(t, sc, true)
				l := mustAcquire(t, c, "k", lock.WithTTL(time.Second))
				time.Sleep(100 * ms)
				called := time.Now()
				err := l.Extend(context.Background(), time.Second)
				if !errors.Is(err, lock.ErrNotHeld) {
					t.Errorf("Extend: err = %v, want ErrNotHeld", err)
				}
				if notHeld != driver.ErrNotHeld && !errors.Is(err, notHeld) {
					t.Errorf("Extend: err = %v; the driver's wrapped error is not reachable", err)
				}
				if l.ValidUntil().After(called) {
					t.Errorf("ValidUntil is %v after the refused extension, want no later than it", l.ValidUntil().Sub(called))
				}
				if got, want := c.Stats(), (lock.Stats{Acquired: 1, Lost: 1}); got != want {
					t.Errorf("Stats = %+v, want %+v", got, want)
				}
				checkLost(t, l, sc)
			})
		})
	}
}

func TestExtend_backendErrorKeepsLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := &scriptedConn{onExtend: func(_ context.Context, n int) error {
			if n == 1 {
				return errBackendDown
			}
			return nil
		}}
		c := openScripted(t, sc, true)
		l := mustAcquire(t, c, "k", lock.WithTTL(time.Second))
		until := l.ValidUntil()
		time.Sleep(100 * ms)
		err := l.Extend(context.Background(), time.Second)
		if !errors.Is(err, errBackendDown) || errors.Is(err, lock.ErrNotHeld) {
			t.Errorf("Extend: err = %v, want the backend's error and not ErrNotHeld", err)
		}
		if !l.ValidUntil().Equal(until) {
			t.Errorf("ValidUntil moved by %v after a failed extension", l.ValidUntil().Sub(until))
		}
		time.Sleep(100 * ms)
		start := time.Now()
		if err := l.Extend(context.Background(), time.Second); err != nil {
			t.Fatalf("second Extend: %v", err)
		}
		if want := start.Add(time.Second - driftOf(time.Second, lock.DefaultDriftFactor)); !l.ValidUntil().Equal(want) {
			t.Errorf("ValidUntil = %v after the retry, want %v", l.ValidUntil().Sub(start), want.Sub(start))
		}
		if got, want := c.Stats(), (lock.Stats{Acquired: 1, Extended: 1}); got != want {
			t.Errorf("Stats = %+v, want %+v", got, want)
		}
		if err := l.Release(context.Background()); err != nil {
			t.Errorf("Release: %v", err)
		}
	})
}

func TestExtend_unsupportedWithoutExtender(t *testing.T) {
	sc := &scriptedConn{}
	c := openScripted(t, sc, false)
	l := mustAcquire(t, c, "k")
	err := l.Extend(context.Background(), time.Second)
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Extend: err = %v, want errors.ErrUnsupported", err)
	}
	if errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Extend: err = %v matches ErrNotHeld; the lock is still held", err)
	}
	if err := l.Release(context.Background()); err != nil {
		t.Errorf("Release after an unsupported Extend: %v", err)
	}
}

func TestExtend_invalidTTL(t *testing.T) {
	sc := &scriptedConn{}
	c := openScripted(t, sc, true)
	l := mustAcquire(t, c, "k")
	for _, ttl := range []time.Duration{0, -time.Second, lock.MinTTL - 1, lock.MaxTTL + 1} {
		if err := l.Extend(context.Background(), ttl); !errors.Is(err, lock.ErrInvalidTTL) {
			t.Errorf("Extend(%v): err = %v, want ErrInvalidTTL", ttl, err)
		}
	}
	if n := len(sc.extendCalls()); n != 0 {
		t.Errorf("driver called %d times with invalid TTLs", n)
	}
}

// --- Release ---------------------------------------------------------------

func TestRelease_endsValidityAtTheCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := &scriptedConn{onRelease: func(context.Context, int) error {
			time.Sleep(100 * ms)
			return nil
		}}
		c := openScripted(t, sc, false)
		l := mustAcquire(t, c, "k", lock.WithTTL(time.Minute))
		time.Sleep(time.Second)
		called := time.Now()
		if err := l.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
		if l.ValidUntil().After(called) {
			t.Errorf("ValidUntil is %v after the Release call, want no later than it", l.ValidUntil().Sub(called))
		}
		if got, want := c.Stats(), (lock.Stats{Acquired: 1, Released: 1}); got != want {
			t.Errorf("Stats = %+v, want %+v", got, want)
		}
		if err := l.Release(context.Background()); !errors.Is(err, lock.ErrNotHeld) {
			t.Errorf("second Release: err = %v, want ErrNotHeld", err)
		}
		if n := len(sc.releaseCalls()); n != 1 {
			t.Errorf("driver Release called %d times, want 1", n)
		}
		if got := c.Stats(); got.Lost != 0 {
			t.Errorf("a released lock counted as lost: %+v", got)
		}
	})
}

func TestRelease_backendErrorThenRetry(t *testing.T) {
	sc := &scriptedConn{onRelease: func(_ context.Context, n int) error {
		if n == 1 {
			return errBackendDown
		}
		return nil
	}}
	c := openScripted(t, sc, false)
	l := mustAcquire(t, c, "k", lock.WithTTL(time.Minute))
	until := l.ValidUntil()
	err := l.Release(context.Background())
	if !errors.Is(err, errBackendDown) || errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Release: err = %v, want the backend's error and not ErrNotHeld", err)
	}
	if !l.ValidUntil().Equal(until) {
		t.Error("a failed Release changed ValidUntil")
	}
	if err := l.Release(context.Background()); err != nil {
		t.Errorf("retried Release: %v", err)
	}
	if got, want := c.Stats(), (lock.Stats{Acquired: 1, Released: 1}); got != want {
		t.Errorf("Stats = %+v, want %+v", got, want)
	}
}

func TestRelease_notOwner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		a, b := openMemory(t, store), openMemory(t, store)
		la := mustAcquire(t, a, "k", lock.WithTTL(time.Second))
		time.Sleep(2 * time.Second)
		lb := mustAcquire(t, b, "k", lock.WithTTL(time.Minute))
		err := la.Release(context.Background())
		if !errors.Is(err, lock.ErrNotHeld) {
			t.Errorf("Release by the expired holder: err = %v, want ErrNotHeld", err)
		}
		if _, err := b.TryAcquire(context.Background(), "k"); !errors.Is(err, lock.ErrNotAcquired) {
			t.Errorf("the new holder's lock was released by the old one: TryAcquire err = %v", err)
		}
		if got, want := a.Stats(), (lock.Stats{Acquired: 1, Lost: 1}); got != want {
			t.Errorf("old holder's Stats = %+v, want %+v", got, want)
		}
		if err := lb.Release(context.Background()); err != nil {
			t.Error(err)
		}
	})
}
