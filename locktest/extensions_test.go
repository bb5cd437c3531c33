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

// TestFailExtensions_keepAliveRetries: a failed extension leaves the lock
// valid, and KeepAlive's next try extends it.
func TestFailExtensions_keepAliveRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := locktest.New()
		c := open(t, b)
		errBroken := errors.New("broken")
		b.FailExtensions(2, errBroken)
		ctx := context.Background()
		l, err := c.Acquire(ctx, "k", lock.WithTTL(3*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		stop := l.KeepAlive()
		time.Sleep(10 * time.Second)
		stop()
		if err := l.Err(); err != nil {
			t.Errorf("Err = %v after two failed extensions, want the lock kept", err)
		}
		if s := c.Stats(); s.Lost != 0 || s.Extended < 8 {
			t.Errorf("Stats = %+v, want about 9 extensions, none lost", s)
		}
		if err := l.Release(ctx); err != nil {
			t.Errorf("Release: %v", err)
		}
	})
}

// TestFailExtensions_errors: Extend returns the given error, or one
// matching ErrUnavailable for nil; n <= 0 cancels the fault.
func TestFailExtensions_errors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := locktest.New()
		c := open(t, b)
		ctx := context.Background()
		l, err := c.Acquire(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		errBroken := errors.New("broken")
		b.FailExtensions(1, errBroken)
		if err := l.Extend(ctx, time.Second); !errors.Is(err, errBroken) {
			t.Errorf("Extend = %v, want errBroken", err)
		}
		b.FailExtensions(1, nil)
		if err := l.Extend(ctx, time.Second); !errors.Is(err, lock.ErrUnavailable) {
			t.Errorf("Extend = %v, want ErrUnavailable", err)
		}
		b.FailExtensions(5, nil)
		b.FailExtensions(0, nil)
		if err := l.Extend(ctx, time.Second); err != nil {
			t.Errorf("Extend after the fault was cancelled = %v", err)
		}
		b.FailExtensions(-1, errBroken)
		if err := l.Extend(ctx, time.Second); err != nil {
			t.Errorf("Extend after FailExtensions(-1) = %v", err)
		}
	})
}

// TestFailExtensions_untilValidityRunsOut: extensions that fail until the
// validity passes end Do's function at ValidUntil with ErrLost.
func TestFailExtensions_untilValidityRunsOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := locktest.New()
		c := open(t, b)
		b.FailExtensions(1000, nil)
		var until, cancelled time.Time
		err := c.Do(context.Background(), "k", func(ctx context.Context) error {
			until = lock.FromContext(ctx).ValidUntil()
			<-ctx.Done()
			cancelled = time.Now()
			return nil
		}, lock.WithTTL(time.Second))
		if !errors.Is(err, lock.ErrLost) {
			t.Errorf("Do = %v, want ErrLost", err)
		}
		if !cancelled.Equal(until) {
			t.Errorf("cancelled %v after ValidUntil, want at it", cancelled.Sub(until))
		}
	})
}

// TestRefuseExtensions_endsTheLockAndFreesTheKey: a refused extension ends
// Do's function at once with ErrLost, and another client takes the key.
func TestRefuseExtensions_endsTheLockAndFreesTheKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := locktest.New()
		c, other := open(t, b), open(t, b)
		b.RefuseExtensions(1)
		const ttl = 3 * time.Second
		start := time.Now()
		var cancelled time.Time
		var cause error
		err := c.Do(context.Background(), "k", func(ctx context.Context) error {
			<-ctx.Done()
			cancelled, cause = time.Now(), context.Cause(ctx)
			if _, err := other.TryAcquire(context.Background(), "k"); err != nil {
				t.Errorf("the key is not free after a refused extension: %v", err)
			}
			return nil
		}, lock.WithTTL(ttl))
		if !errors.Is(err, lock.ErrLost) || !errors.Is(cause, lock.ErrLost) {
			t.Errorf("Do = %v, cause %v; want both ErrLost", err, cause)
		}
		if got := cancelled.Sub(start); got != ttl/3 {
			t.Errorf("cancelled at start+%v, want at the first extension, start+%v", got, ttl/3)
		}
	})
}

// TestHangExtensions_endAtValidUntil: an extension that hangs ends Do's
// function at ValidUntil, and the key is given back.
func TestHangExtensions_endAtValidUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := locktest.New()
		c, other := open(t, b), open(t, b)
		b.HangExtensions(1)
		var until, cancelled time.Time
		err := c.Do(context.Background(), "k", func(ctx context.Context) error {
			until = lock.FromContext(ctx).ValidUntil()
			<-ctx.Done()
			cancelled = time.Now()
			return nil
		}, lock.WithTTL(time.Second))
		if !errors.Is(err, lock.ErrLost) {
			t.Errorf("Do = %v, want ErrLost", err)
		}
		if !cancelled.Equal(until) {
			t.Errorf("cancelled %v after ValidUntil, want at it", cancelled.Sub(until))
		}
		if _, err := other.TryAcquire(context.Background(), "k"); err != nil {
			t.Errorf("the key is not free after the hung extension: %v", err)
		}
		if n := b.Resume(); n != 0 {
			t.Errorf("Resume = %d, want 0: the hung extension ended with its context", n)
		}
	})
}

// TestHangExtensions_resume: Resume lets a hung extension go on to the
// backend, which extends the lock.
func TestHangExtensions_resume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := locktest.New()
		c := open(t, b)
		ctx := context.Background()
		l, err := c.Acquire(ctx, "k", lock.WithTTL(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		b.HangExtensions(1)
		extended := make(chan error)
		go func() { extended <- l.Extend(ctx, 20*time.Second) }()
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case err := <-extended:
			t.Fatalf("Extend returned %v during the hang", err)
		default:
		}
		if n := b.Resume(); n != 1 {
			t.Errorf("Resume = %d, want 1", n)
		}
		if err := <-extended; err != nil {
			t.Fatalf("Extend after Resume = %v", err)
		}
		// The validity runs from the call, a second before: 20s, less the
		// second and the drift allowance (1% and 2ms).
		if left, want := time.Until(l.ValidUntil()), 18798*ms; left != want {
			t.Errorf("%v left after the extension, want %v", left, want)
		}
		// The fault is over: the next extension goes through.
		if err := l.Extend(ctx, 20*time.Second); err != nil {
			t.Errorf("Extend after Resume = %v", err)
		}
		l.Release(ctx)
	})
}

// TestExtensionFaults_replaceEachOther: the last extension fault set is
// the one in force.
func TestExtensionFaults_replaceEachOther(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := locktest.New()
		c := open(t, b)
		ctx := context.Background()
		l, err := c.Acquire(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		b.HangExtensions(3)
		b.FailExtensions(1, nil)
		if err := l.Extend(ctx, time.Second); !errors.Is(err, lock.ErrUnavailable) {
			t.Errorf("Extend = %v, want ErrUnavailable (the hang was replaced)", err)
		}
		if err := l.Extend(ctx, time.Second); err != nil {
			t.Errorf("Extend = %v, want nil", err)
		}
		l.Release(ctx)
	})
}
