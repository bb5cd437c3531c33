package nats_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock"
)

// TestHandoff_everyReleaseWakesTheWaiters has 8 clients take one key in
// turns for a few seconds, each holding it for 1ms and polling only once
// a minute, as BenchmarkHandoff does. Only wake-ups can hand the key on.
// Each release wakes the 7 waiting calls, so none of them can wait for
// seconds unless its attempt left it waiting for a wake-up that had come
// already (a key reported held that nobody held, say), and the key can
// never stay free for seconds while they wait.
func TestHandoff_everyReleaseWakesTheWaiters(t *testing.T) {
	const (
		clients = 8
		run     = 5 * time.Second
		hold    = time.Millisecond
		maxFree = 2 * time.Second // the longest the key may stay free while calls wait
		maxWait = 5 * time.Second // the longest a call may wait: 3.2s seen in make test beside 3 other packages; a lost wake-up sleeps a minute
	)
	full := dsn(t)
	cs := make([]*lock.Client, clients)
	for i := range cs {
		cs[i] = open(t, full)
	}
	ctx, cancel := context.WithTimeout(context.Background(), run)
	defer cancel()
	var (
		mu       sync.Mutex
		freed    time.Time // when the key was last released; zero while held
		longest  time.Duration
		waited   time.Duration
		acquired int
		wg       sync.WaitGroup
		errs     = make(chan error, clients)
	)
	poll := lock.WithRetry(lock.FixedDelay(time.Minute))
	for _, c := range cs {
		wg.Go(func() {
			for {
				start := time.Now()
				l, err := c.Acquire(ctx, "handoff", poll)
				mu.Lock()
				waited = max(waited, time.Since(start))
				mu.Unlock()
				if err != nil {
					if !errors.Is(err, context.DeadlineExceeded) {
						errs <- err
					}
					return
				}
				mu.Lock()
				if !freed.IsZero() {
					longest = max(longest, time.Since(freed))
				}
				freed = time.Time{}
				acquired++
				mu.Unlock()
				time.Sleep(hold)
				mu.Lock()
				freed = time.Now()
				mu.Unlock()
				if err := l.Release(context.Background()); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if d, _ := ctx.Deadline(); !freed.IsZero() {
		longest = max(longest, d.Sub(freed))
	}
	t.Logf("%d acquisitions in %v; the longest wait %v; the key stayed free for %v at the longest", acquired, run, waited, longest)
	if longest > maxFree {
		t.Errorf("the key stayed free for %v while calls waited for it (at most %v expected)", longest, maxFree)
	}
	if waited > maxWait {
		t.Errorf("a call waited %v while the key changed hands (at most %v expected)", waited, maxWait)
	}
}
