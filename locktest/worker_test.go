package locktest_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/locktest"
)

// worker is the package doc's worker: it writes every 100ms while it
// holds the lock "report", and stops the moment the lock is lost.
func worker(ctx context.Context, c *lock.Client, write func(context.Context) error) error {
	return c.Do(ctx, "report", func(ctx context.Context) error {
		for ctx.Err() == nil {
			if err := write(ctx); err != nil {
				return err
			}
			time.Sleep(100 * time.Millisecond)
		}
		return context.Cause(ctx)
	})
}

// careless is a worker that ignores its lock's end: it writes ten times,
// whatever happens.
func careless(ctx context.Context, c *lock.Client, write func(context.Context) error) error {
	return c.Do(ctx, "report", func(ctx context.Context) error {
		for range 20 {
			if err := write(ctx); err != nil {
				return err
			}
			time.Sleep(100 * time.Millisecond)
		}
		return nil
	})
}

// checkStopsWhenLost is the package doc's test, for any worker: t fails
// if the worker writes after its lock is lost.
func checkStopsWhenLost(t testing.TB, work func(context.Context, *lock.Client, func(context.Context) error) error) (writes int) {
	b := locktest.New()
	c := open(t, b)
	var mu sync.Mutex
	write := func(ctx context.Context) error { // a fake of the resource
		mu.Lock()
		defer mu.Unlock()
		writes++
		tok, _ := lock.FromContext(ctx).Token()
		if !b.Holds("report", tok) {
			t.Errorf("write %d at %v, after the lock was lost", writes, time.Now().Format("15:04:05.000"))
		}
		return nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		work(context.Background(), c, write)
	}()
	time.Sleep(1050 * time.Millisecond) // eleven writes
	b.Lose("report")
	<-done
	return writes
}

func TestWorker_stopsWhenLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		if n := checkStopsWhenLost(t, worker); n != 11 {
			t.Errorf("%d writes, want 11 before the loss", n)
		}
	})
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, format)
}

// TestWorker_ignoringDoneIsCaught: the same test fails a worker that
// writes on after its lock is lost, once per write after the loss.
func TestWorker_ignoringDoneIsCaught(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{TB: t}
		checkStopsWhenLost(r, careless)
		if len(r.errors) != 9 {
			t.Errorf("%d writes after the loss reported, want 9 (of 20, 11 before it)", len(r.errors))
		}
	})
}
