package zookeeper_test

import (
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
)

// TestContention_tenThousand has 4 clients (2 goroutines each) take 4 keys
// in turn for n acquisitions in all, and checks the history: no two
// holdings of a key overlap, and tokens strictly increase. n is 10,000, or
// $DISTLOCK_ZOOKEEPER_ACQUISITIONS.
func TestContention_tenThousand(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: skipped with -short")
	}
	n := 10000
	if s := os.Getenv("DISTLOCK_ZOOKEEPER_ACQUISITIONS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			t.Fatalf("DISTLOCK_ZOOKEEPER_ACQUISITIONS=%q: want a positive number", s)
		}
		n = v
	}
	theEnsemble(t).healthy(t, 30*time.Second)
	full, _ := dsn(t)
	clients := []*lock.Client{open(t, full), open(t, full), open(t, full), open(t, full)}
	keys := []string{"contention/0", "contention/1", "contention/2", "contention/3"}
	const goroutines = 8
	ctx := ctxFor(t, 5*time.Minute)

	var (
		h        conformance.History
		left     atomic.Int64
		failures atomic.Int64
		wg       sync.WaitGroup
		errMu    sync.Mutex
		lastErr  error
	)
	left.Store(int64(n))
	start := time.Now()
	for g := range goroutines {
		wg.Go(func() {
			c := clients[g%len(clients)]
			for i := 0; left.Add(-1) >= 0; i++ {
				k := keys[(g+i)%len(keys)]
				l, err := c.Acquire(ctx, k, lock.WithTTL(5*time.Second),
					lock.WithRetry(lock.ExponentialBackoff(time.Millisecond, 20*time.Millisecond)))
				if err != nil {
					failures.Add(1)
					errMu.Lock()
					lastErr = err
					errMu.Unlock()
					if ctx.Err() != nil {
						return
					}
					left.Add(1) // try this one again
					continue
				}
				h.Hold(l, time.Now())
				if err := l.Release(ctx); err != nil {
					failures.Add(1) // the holding was recorded up to now
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	overlaps, regressions, report := h.Violations(true)
	t.Logf("%d acquisitions of %d keys by %d goroutines over %d clients in %v (%.0f/s); %d failed operations (last: %v); %d overlaps, %d token regressions",
		h.Len(), len(keys), goroutines, len(clients), took.Round(time.Millisecond), float64(h.Len())/took.Seconds(),
		failures.Load(), lastErr, overlaps, regressions)
	if overlaps != 0 || regressions != 0 {
		t.Errorf("%d overlapping holdings and %d token regressions:\n%s", overlaps, regressions, report)
	}
	if h.Len() != n {
		t.Errorf("%d holdings recorded, want %d", h.Len(), n)
	}
	if f := failures.Load(); f != 0 {
		t.Errorf("%d of %d operations failed on a healthy ensemble (last: %v)", f, n, lastErr)
	}
}
