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

// TestUnavailable_everyCallFails: while the backend is down, acquire,
// extend, release, ping and inspect fail with ErrUnavailable, and work
// again once it is back.
func TestUnavailable_everyCallFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := locktest.New()
		c := open(t, b)
		ctx := context.Background()
		l, err := c.Acquire(ctx, "held", lock.WithTTL(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		b.Unavailable(time.Second)
		_, tryErr := c.TryAcquire(ctx, "k")
		_, _, inspectErr := c.Inspect(ctx, "held")
		for name, err := range map[string]error{
			"TryAcquire": tryErr,
			"Extend":     l.Extend(ctx, time.Minute),
			"Release":    l.Release(ctx),
			"Ping":       c.Ping(ctx),
			"Inspect":    inspectErr,
		} {
			if !errors.Is(err, lock.ErrUnavailable) {
				t.Errorf("%s during the outage = %v, want ErrUnavailable", name, err)
			}
		}
		if l.Err() != nil {
			t.Errorf("the lock ended during a short outage: %v", l.Err())
		}
		time.Sleep(time.Second)
		if err := c.Ping(ctx); err != nil {
			t.Errorf("Ping after the outage = %v", err)
		}
		if err := l.Release(ctx); err != nil {
			t.Errorf("Release after the outage = %v", err)
		}
	})
}

// TestUnavailable_acquireWaitsThrough: a waiting Acquire keeps trying
// through an outage and takes the key soon after it ends.
func TestUnavailable_acquireWaitsThrough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := locktest.New()
		c := open(t, b)
		b.Unavailable(3 * time.Second)
		start := time.Now()
		l, err := c.Acquire(context.Background(), "k")
		if err != nil {
			t.Fatalf("Acquire through a 3s outage: %v", err)
		}
		if took := time.Since(start); took < 3*time.Second || took > 4*time.Second {
			t.Errorf("Acquire took %v, want a little over the 3s outage", took)
		}
		if c.Stats().Failed == 0 {
			t.Error("no failed attempt counted during the outage")
		}
		l.Release(context.Background())
	})
}

// TestUnavailable_longerThanMaxUnavailable: an outage longer than
// lock.MaxUnavailable ends a waiting Acquire with ErrUnavailable.
func TestUnavailable_longerThanMaxUnavailable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := locktest.New()
		c := open(t, b)
		b.Unavailable(time.Hour)
		start := time.Now()
		_, err := c.Acquire(context.Background(), "k")
		if !errors.Is(err, lock.ErrUnavailable) {
			t.Errorf("Acquire = %v, want ErrUnavailable", err)
		}
		if took := time.Since(start); took < lock.MaxUnavailable || took > 2*lock.MaxUnavailable {
			t.Errorf("Acquire gave up after %v, want about %v", took, lock.MaxUnavailable)
		}
	})
}

// TestUnavailable_losesAHeldLock: an outage longer than the TTL ends a
// kept lock at its ValidUntil, and Unavailable(0) ends an outage.
func TestUnavailable_losesAHeldLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := locktest.New()
		c := open(t, b)
		var until, cancelled time.Time
		err := c.Do(context.Background(), "k", func(ctx context.Context) error {
			until = lock.FromContext(ctx).ValidUntil()
			b.Unavailable(time.Hour)
			<-ctx.Done()
			cancelled = time.Now()
			b.Unavailable(0)
			return nil
		}, lock.WithTTL(time.Second))
		if !errors.Is(err, lock.ErrLost) {
			t.Errorf("Do = %v, want ErrLost", err)
		}
		if !cancelled.Equal(until) {
			t.Errorf("cancelled %v after ValidUntil, want at it", cancelled.Sub(until))
		}
		if err := c.Ping(context.Background()); err != nil {
			t.Errorf("Ping after Unavailable(0) = %v", err)
		}
	})
}
