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

// TestLose_endsTheLockAtOnce: Done closes at the instant of the loss, long
// before the validity runs out, and the key is free for another client.
func TestLose_endsTheLockAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := locktest.New()
		c, other := open(t, b), open(t, b)
		ctx := context.Background()
		l, err := c.Acquire(ctx, "k", lock.WithTTL(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		done := l.Done()
		time.Sleep(time.Second)
		lostAt := time.Now()
		if !b.Lose("k") {
			t.Fatal("Lose = false for a held lock")
		}
		synctest.Wait()
		if !ended(done) {
			t.Fatal("Done not closed after Lose")
		}
		if err := l.Err(); !errors.Is(err, lock.ErrLost) {
			t.Errorf("Err = %v, want ErrLost", err)
		}
		if !l.ValidUntil().Equal(lostAt) {
			t.Errorf("ValidUntil = lost at %+v, want the instant of the loss", l.ValidUntil().Sub(lostAt))
		}
		if b.Holds("k", 1) {
			t.Error("Holds = true after Lose")
		}
		if err := l.Extend(ctx, time.Minute); !errors.Is(err, lock.ErrNotHeld) {
			t.Errorf("Extend = %v, want ErrNotHeld", err)
		}
		if err := l.Release(ctx); !errors.Is(err, lock.ErrNotHeld) {
			t.Errorf("Release = %v, want ErrNotHeld", err)
		}
		l2, err := other.TryAcquire(ctx, "k")
		if err != nil {
			t.Fatalf("the key is not free after Lose: %v", err)
		}
		if tok, _ := l2.Token(); tok != 2 {
			t.Errorf("next token = %v, want 2", tok)
		}
		if s := c.Stats(); s.Lost != 1 {
			t.Errorf("Stats().Lost = %d, want 1", s.Lost)
		}
	})
}

// TestLose_cancelsDo: Do's function is cancelled with a cause matching
// ErrLost, and Do returns an error matching it.
func TestLose_cancelsDo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := locktest.New()
		c := open(t, b)
		var cause error
		err := c.Do(context.Background(), "k", func(ctx context.Context) error {
			b.Lose("k")
			<-ctx.Done()
			cause = context.Cause(ctx)
			return nil
		})
		if !errors.Is(cause, lock.ErrLost) {
			t.Errorf("fn's cause = %v, want ErrLost", cause)
		}
		if !errors.Is(err, lock.ErrLost) {
			t.Errorf("Do = %v, want ErrLost", err)
		}
	})
}

// TestLose_wakesWaiter: a client waiting for the key takes it at the
// instant of the loss, woken by the backend's release.
func TestLose_wakesWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := locktest.New()
		c, other := open(t, b), open(t, b)
		ctx := context.Background()
		if _, err := c.Acquire(ctx, "k", lock.WithTTL(time.Minute)); err != nil {
			t.Fatal(err)
		}
		got := make(chan time.Time, 1)
		go func() {
			if l, err := other.Acquire(ctx, "k"); err == nil {
				got <- time.Now()
				l.Release(ctx)
			}
			close(got)
		}()
		time.Sleep(time.Second)
		lostAt := time.Now()
		b.Lose("k")
		if at, ok := <-got; !ok || !at.Equal(lostAt) {
			t.Errorf("waiter took the key at %v after the loss (ok %v), want at once", at.Sub(lostAt), ok)
		}
	})
}

// TestLose_nothingHeld: Lose reports false for a key never held, a key
// released, and a lock whose lease ran out.
func TestLose_nothingHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := locktest.New()
		c := open(t, b)
		ctx := context.Background()
		if b.Lose("never") || b.Lose("") {
			t.Error("Lose = true for a key never held")
		}
		l, err := c.Acquire(ctx, "released")
		if err != nil {
			t.Fatal(err)
		}
		l.Release(ctx)
		if b.Lose("released") {
			t.Error("Lose = true for a released key")
		}
		l, err = c.Acquire(ctx, "expired", lock.WithTTL(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		if b.Lose("expired") {
			t.Error("Lose = true for a lock whose lease ran out")
		}
		if err := l.Err(); !errors.Is(err, lock.ErrLost) {
			t.Errorf("Err = %v, want ErrLost (ran out)", err)
		}
	})
}

// TestLose_zeroBackend: the zero Backend works, over a store of its own.
func TestLose_zeroBackend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b locktest.Backend
		c := open(t, &b)
		l, err := c.Acquire(context.Background(), "k")
		if err != nil {
			t.Fatal(err)
		}
		b.Lose("k")
		synctest.Wait()
		if !errors.Is(l.Err(), lock.ErrLost) {
			t.Errorf("Err = %v, want ErrLost", l.Err())
		}
	})
}
