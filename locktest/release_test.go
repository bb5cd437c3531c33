package locktest_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/locktest"
)

// TestDelayReleases_keyStaysHeld: a delayed release keeps the key from
// others for the delay, then frees it.
func TestDelayReleases_keyStaysHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := locktest.New()
		c, other := open(t, b), open(t, b)
		ctx := context.Background()
		l, err := c.Acquire(ctx, "k", lock.WithTTL(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		b.DelayReleases(1, 2*time.Second)
		start := time.Now()
		released := make(chan error)
		go func() { released <- l.Release(ctx) }()
		time.Sleep(time.Second)
		if _, err := other.TryAcquire(ctx, "k"); !errors.Is(err, lock.ErrNotAcquired) {
			t.Errorf("TryAcquire during the delayed release = %v, want ErrNotAcquired", err)
		}
		if err := <-released; err != nil {
			t.Errorf("Release = %v", err)
		}
		if took := time.Since(start); took != 2*time.Second {
			t.Errorf("Release took %v, want the 2s delay", took)
		}
		l2, err := other.TryAcquire(ctx, "k")
		if err != nil {
			t.Fatalf("TryAcquire after the release = %v", err)
		}
		// The fault was for one release only.
		start = time.Now()
		if err := l2.Release(ctx); err != nil || time.Since(start) != 0 {
			t.Errorf("second Release = %v after %v, want nil at once", err, time.Since(start))
		}
	})
}

// TestDelayReleases_contextEndsFirst: a release whose context ends during
// the delay fails, and the lock stays held.
func TestDelayReleases_contextEndsFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := locktest.New()
		c := open(t, b)
		ctx := context.Background()
		l, err := c.Acquire(ctx, "k", lock.WithTTL(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		b.DelayReleases(1, time.Hour)
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if err := l.Release(rctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Release = %v, want the context's deadline", err)
		}
		if !b.Holds("k", 1) || l.Err() != nil {
			t.Errorf("lock not held after a release that never went out (Holds %v, Err %v)", b.Holds("k", 1), l.Err())
		}
		b.DelayReleases(0, time.Hour) // cancels
		if err := l.Release(ctx); err != nil {
			t.Errorf("Release = %v", err)
		}
	})
}

// TestDelayReleases_handover: a handover to a waiting call of the same
// client counts as a release, and is delayed too.
func TestDelayReleases_handover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := locktest.New()
		c := open(t, b)
		ctx := context.Background()
		l, err := c.Acquire(ctx, "k", lock.WithTTL(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan *lock.Lock)
		go func() {
			l2, _ := c.Acquire(ctx, "k")
			got <- l2
		}()
		synctest.Wait()
		b.DelayReleases(1, time.Second)
		start := time.Now()
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
		l2 := <-got
		if l2 == nil {
			t.Fatal("the waiting Acquire failed")
		}
		if took := time.Since(start); took != time.Second {
			t.Errorf("handover took %v, want the 1s delay", took)
		}
		if tok, _ := l2.Token(); !b.Holds("k", tok) {
			t.Errorf("Holds(k, %v) = false for the lock handed over", tok)
		}
		l2.Release(ctx)
	})
}
