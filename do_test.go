package lock_test

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/memory"
)

// keeperRunning reports whether a goroutine of Do's background keeper
// exists. Call it after synctest.Wait, so that exiting goroutines are gone.
func keeperRunning() bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return bytes.Contains(buf[:n], []byte("lock.(*Lock).keep"))
		}
		buf = make([]byte, 2*len(buf))
	}
}

func TestDo_keeperHoldsLockThroughLongFunction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		c, other := openMemory(t, store), openMemory(t, store)
		const ttl = time.Second
		ctx := context.Background()
		checks := 0
		err := c.Do(ctx, "k", func(ctx context.Context) error {
			for range 100 { // 10 TTLs
				time.Sleep(ttl / 10)
				if _, err := other.TryAcquire(ctx, "k"); !errors.Is(err, lock.ErrNotAcquired) {
					t.Errorf("another client's TryAcquire at %v: err = %v, want ErrNotAcquired", time.Now(), err)
				}
				if ctx.Err() != nil {
					t.Errorf("fn's context ended while the lock was kept: %v", context.Cause(ctx))
					return nil
				}
				checks++
			}
			return nil
		}, lock.WithTTL(ttl))
		if err != nil {
			t.Fatalf("Do: %v", err)
		}
		if checks != 100 {
			t.Errorf("fn ran %d checks, want 100", checks)
		}
		st := c.Stats()
		if st.Extended < 29 || st.Lost != 0 || st.Released != 1 {
			t.Errorf("Stats = %+v; want ~30 extensions over 10 TTLs, none lost, one release", st)
		}
		if _, err := other.TryAcquire(ctx, "k"); err != nil {
			t.Errorf("key not free after Do: %v", err)
		}
	})
}

func TestDo_extendsEveryThirdOfTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := &scriptedConn{}
		c := openScripted(t, sc, true)
		const ttl = 900 * ms
		start := time.Now()
		err := c.Do(context.Background(), "k", func(context.Context) error {
			time.Sleep(2*time.Second + 50*ms)
			return nil
		}, lock.WithTTL(ttl))
		if err != nil {
			t.Fatal(err)
		}
		ext := sc.extendCalls()
		if len(ext) != 6 {
			t.Fatalf("%d extensions in 2.05s, want 6 (every 300ms)", len(ext))
		}
		for i, e := range ext {
			if got, want := e.at.Sub(start), time.Duration(i+1)*ttl/3; got != want {
				t.Errorf("extension %d at start+%v, want start+%v", i+1, got, want)
			}
			if e.ttl != ttl || e.ctxErr != nil {
				t.Errorf("extension %d = %+v, want ttl %v under a live context", i+1, e, ttl)
			}
		}
	})
}

func TestDo_noExtenderCancelsAtValidUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := &scriptedConn{}
		c := openScripted(t, sc, false)
		var until, cancelled time.Time
		var cause error
		err := c.Do(context.Background(), "k", func(ctx context.Context) error {
			until = lock.FromContext(ctx).ValidUntil()
			<-ctx.Done()
			cancelled, cause = time.Now(), context.Cause(ctx)
			return nil
		}, lock.WithTTL(900*ms))
		if !cancelled.Equal(until) {
			t.Errorf("fn's context ended %v after ValidUntil, want at it", cancelled.Sub(until))
		}
		if !errors.Is(cause, lock.ErrLost) {
			t.Errorf("cause = %v, want ErrLost", cause)
		}
		if !errors.Is(err, lock.ErrLost) {
			t.Errorf("Do: err = %v, want ErrLost although fn returned nil", err)
		}
		var e *lock.Error
		if !errors.As(err, &e) || e.Op != "do" || e.Key != "k" {
			t.Errorf("Do: err = %#v, want a *lock.Error for do k", err)
		}
		if got := c.Stats(); got.Lost != 1 || got.Acquired != 1 {
			t.Errorf("Stats = %+v, want Acquired 1, Lost 1", got)
		}
	})
}

func TestDo_extensionRefusedCancelsWithErrLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := &scriptedConn{onExtend: func(context.Context, int) error { return driver.ErrNotHeld }}
		c := openScripted(t, sc, true)
		errFn := errors.New("fn stopped")
		start := time.Now()
		var cancelled time.Time
		var cause error
		err := c.Do(context.Background(), "k", func(ctx context.Context) error {
			<-ctx.Done()
			cancelled, cause = time.Now(), context.Cause(ctx)
			return errFn
		}, lock.WithTTL(900*ms))
		if got := cancelled.Sub(start); got != 300*ms {
			t.Errorf("fn's context ended at start+%v, want at the refused extension (start+300ms)", got)
		}
		if !errors.Is(cause, lock.ErrLost) || !errors.Is(cause, lock.ErrNotHeld) {
			t.Errorf("cause = %v, want ErrLost (because of ErrNotHeld)", cause)
		}
		if !errors.Is(err, lock.ErrLost) || !errors.Is(err, errFn) {
			t.Errorf("Do: err = %v, want both ErrLost and fn's error", err)
		}
		if n := len(sc.extendCalls()); n != 1 {
			t.Errorf("%d extension attempts, want 1: a refusal is final", n)
		}
		if got, want := c.Stats(), (lock.Stats{Acquired: 1, Lost: 1}); got != want {
			t.Errorf("Stats = %+v, want %+v", got, want)
		}
	})
}

func TestDo_extensionErrorsRetried(t *testing.T) {
	tests := []struct {
		name     string
		failures int // extension calls that fail; -1 for all
		wantLost bool
	}{
		{"transient", 2, false},
		{"until the validity runs out", -1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sc := &scriptedConn{onExtend: func(_ context.Context, n int) error {
					if tt.failures < 0 || n <= tt.failures {
						return errBackendDown
					}
					return nil
				}}
				c := openScripted(t, sc, true)
				var until, ended time.Time
				err := c.Do(context.Background(), "k", func(ctx context.Context) error {
					until = lock.FromContext(ctx).ValidUntil()
					select {
					case <-ctx.Done():
						ended = time.Now()
					case <-time.After(2 * time.Second):
					}
					return nil
				}, lock.WithTTL(900*ms))
				ext := sc.extendCalls()
				if len(ext) < 2 || ext[1].at.Sub(ext[0].at) >= 300*ms {
					t.Errorf("extension calls at %v; want a failed one retried before the next regular one", ext)
				}
				if !tt.wantLost {
					if err != nil || !ended.IsZero() {
						t.Errorf("Do = %v, fn cancelled: %v; want the lock kept after transient errors", err, !ended.IsZero())
					}
					return
				}
				if !errors.Is(err, lock.ErrLost) {
					t.Errorf("Do: err = %v, want ErrLost", err)
				}
				if !ended.Equal(until) {
					t.Errorf("fn's context ended %v after ValidUntil, want at it", ended.Sub(until))
				}
				for _, e := range ext {
					if !e.at.Before(until) {
						t.Errorf("extension attempted at ValidUntil%+v, after the lock expired", e.at.Sub(until))
					}
				}
			})
		})
	}
}

func TestDo_returnsFnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := openMemory(t, memory.New())
		errFn := errors.New("fn failed")
		err := c.Do(context.Background(), "k", func(context.Context) error { return errFn })
		if err != errFn {
			t.Errorf("Do = %v, want fn's error itself", err)
		}
		if errors.Is(err, lock.ErrLost) {
			t.Error("Do reports a loss that did not happen")
		}
		if got, want := c.Stats(), (lock.Stats{Acquired: 1, Released: 1}); got != want {
			t.Errorf("Stats = %+v, want %+v", got, want)
		}
	})
}

func TestDo_releasesAfterCallerCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		c, other := openMemory(t, store), openMemory(t, store)
		ctx, cancel := context.WithCancel(context.Background())
		err := c.Do(ctx, "k", func(fctx context.Context) error {
			cancel()
			<-fctx.Done() // fn's context follows the caller's
			return fctx.Err()
		}, lock.WithTTL(time.Hour))
		if !errors.Is(err, context.Canceled) || errors.Is(err, lock.ErrLost) {
			t.Errorf("Do = %v, want fn's context.Canceled and no ErrLost", err)
		}
		if _, err := other.TryAcquire(context.Background(), "k"); err != nil {
			t.Errorf("key still held after Do returned (TTL 1h): %v", err)
		}
		if got, want := c.Stats(), (lock.Stats{Acquired: 1, Released: 1}); got != want {
			t.Errorf("Stats = %+v, want %+v", got, want)
		}
	})
}

func TestDo_keepsLockWhileFnWindsUpAfterCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		c, other := openMemory(t, store), openMemory(t, store)
		ctx, cancel := context.WithTimeout(context.Background(), 100*ms)
		defer cancel()
		err := c.Do(ctx, "k", func(context.Context) error {
			time.Sleep(3 * time.Second) // ignores ctx: 3 TTLs
			if _, err := other.TryAcquire(context.Background(), "k"); !errors.Is(err, lock.ErrNotAcquired) {
				t.Errorf("key taken while fn was still running: %v", err)
			}
			return nil
		}, lock.WithTTL(time.Second))
		if err != nil {
			t.Errorf("Do = %v, want fn's nil", err)
		}
	})
}

func TestDo_fromContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := openMemory(t, memory.New())
		if l := lock.FromContext(context.Background()); l != nil {
			t.Errorf("FromContext(Background) = %v, want nil", l)
		}
		var got *lock.Lock
		err := c.Do(context.Background(), "invoice:42", func(ctx context.Context) error {
			got = lock.FromContext(ctx)
			if got == nil {
				return errors.New("no lock in fn's context")
			}
			if got.Key() != "invoice:42" || !time.Now().Before(got.ValidUntil()) {
				t.Errorf("FromContext = key %q, valid for %v", got.Key(), time.Until(got.ValidUntil()))
			}
			if _, ok := got.Token(); !ok {
				t.Error("lock in fn's context has no fencing token on the memory driver")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := got.Release(context.Background()); !errors.Is(err, lock.ErrNotHeld) {
			t.Errorf("Release of Do's lock after Do: err = %v, want ErrNotHeld (Do released it)", err)
		}
	})
}

func TestDo_invalidArguments(t *testing.T) {
	tests := []struct {
		name string
		key  string
		fn   func(context.Context) error
		opts []lock.Option
		want error
	}{
		{"nil function", "k", nil, nil, lock.ErrInvalidOption},
		{"invalid key", "", func(context.Context) error { return nil }, nil, lock.ErrInvalidKey},
		{"invalid TTL", "k", func(context.Context) error { return nil }, []lock.Option{lock.WithTTL(0)}, lock.ErrInvalidTTL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := &scriptedConn{}
			c := openScripted(t, sc, true)
			called := false
			fn := tt.fn
			if fn != nil {
				fn = func(ctx context.Context) error { called = true; return nil }
			}
			err := c.Do(context.Background(), tt.key, fn, tt.opts...)
			if !errors.Is(err, tt.want) {
				t.Errorf("Do: err = %v, want %v", err, tt.want)
			}
			if called || len(sc.acquireCalls()) != 0 {
				t.Errorf("fn called: %v, driver called %d times; want neither", called, len(sc.acquireCalls()))
			}
		})
	}
}

func TestDo_acquireFailsWithoutRunningFn(t *testing.T) {
	c := openScripted(t, &scriptedConn{onAcquire: heldAlways}, true)
	called := false
	err := c.Do(context.Background(), "k", func(context.Context) error { called = true; return nil },
		lock.WithRetry(lock.NoRetry()))
	if !errors.Is(err, lock.ErrNotAcquired) || called {
		t.Errorf("Do on a held key = %v, fn called %v; want ErrNotAcquired and fn not called", err, called)
	}
}

func TestDo_noGoroutineLeft(t *testing.T) {
	tests := []struct {
		name   string
		extend bool
		fn     func(ctx context.Context) error
	}{
		{"returns at once", true, func(context.Context) error { return nil }},
		{"after extensions", true, func(context.Context) error { time.Sleep(5 * time.Second); return nil }},
		{"after a loss", false, func(ctx context.Context) error { <-ctx.Done(); return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := openScripted(t, &scriptedConn{}, tt.extend)
				c.Do(context.Background(), "k", tt.fn, lock.WithTTL(time.Second))
				synctest.Wait()
				if keeperRunning() {
					t.Error("Do's keeper goroutine still runs after Do returned")
				}
			})
		})
	}
}

func TestDo_panickingFnStopsKeeperAndReleases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		c, other := openMemory(t, store), openMemory(t, store)
		func() {
			defer func() { recover() }()
			c.Do(context.Background(), "k", func(context.Context) error { panic("handler bug") },
				lock.WithTTL(time.Second))
		}()
		time.Sleep(10 * time.Second) // 10 TTLs
		synctest.Wait()
		if keeperRunning() {
			t.Error("keeper goroutine still runs after fn panicked")
		}
		if _, err := other.TryAcquire(context.Background(), "k"); err != nil {
			t.Errorf("key still held 10 TTLs after fn panicked: %v", err)
		}
		// Make a leaked keeper give up (its extensions now fail with
		// ErrClosed until the validity runs out), so that the bubble ends.
		c.Close()
		time.Sleep(2 * time.Second)
	})
}
