package etcd_test

import (
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
)

// TestContention_memberKilled has 4 clients (2 goroutines each) take 4
// keys in turn for n acquisitions in all, kills the leader after a third of
// them and starts it again after two thirds, and checks the history: no two
// holdings of a key overlap, tokens strictly increase. Acquisitions that
// fail during the election are counted and tried again. n is 10,000, or
// $DISTLOCK_ETCD_ACQUISITIONS.
func TestContention_memberKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: skipped with -short")
	}
	n := 10000
	if s := os.Getenv("DISTLOCK_ETCD_ACQUISITIONS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			t.Fatalf("DISTLOCK_ETCD_ACQUISITIONS=%q: want a positive number", s)
		}
		n = v
	}
	cl := theCluster(t)
	cl.healthy(t, 30*time.Second)
	full := dsn(t)
	clients := []*lock.Client{open(t, full), open(t, full), open(t, full), open(t, full)}
	keys := []string{"contention/0", "contention/1", "contention/2", "contention/3"}
	const goroutines = 8
	ctx := ctxFor(t, 10*time.Minute)

	var (
		h        conformance.History
		left     atomic.Int64
		done     atomic.Int64
		failures atomic.Int64
		wg       sync.WaitGroup
		errMu    sync.Mutex
		lastErr  error
	)
	left.Store(int64(n))
	// The nemesis: the leader dies at n/3 acquisitions and comes back at 2n/3.
	phase := make(chan struct{}, 2)
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
				got := time.Now()
				h.Hold(l, got)
				if err := l.Release(ctx); err != nil {
					failures.Add(1) // the lease ends it; the holding was recorded up to now
				}
				if d := done.Add(1); d == int64(n/3) || d == int64(2*n/3) {
					phase <- struct{}{}
				}
			}
		})
	}
	<-phase
	leader := leaderOf(t, cl.eps, 10*time.Second)
	i := slices.Index(cl.eps, leader)
	killedAt := time.Since(start)
	cl.Kill(t, i)
	t.Cleanup(func() { cl.Restart(t, i) }) // if the test stops first
	<-phase
	restartedAt := time.Since(start)
	cl.Restart(t, i)
	wg.Wait()
	took := time.Since(start)

	overlaps, regressions, report := h.Violations(true)
	t.Logf("%d acquisitions of %d keys by %d goroutines over %d clients in %v (%.0f/s); leader %s killed at %v, restarted at %v; %d failed operations (last: %v); %d overlaps, %d token regressions",
		h.Len(), len(keys), goroutines, len(clients), took.Round(time.Millisecond), float64(h.Len())/took.Seconds(),
		leader, killedAt.Round(time.Millisecond), restartedAt.Round(time.Millisecond), failures.Load(), lastErr, overlaps, regressions)
	if overlaps != 0 || regressions != 0 {
		t.Errorf("%d overlapping holdings and %d token regressions:\n%s", overlaps, regressions, report)
	}
	if h.Len() != n {
		t.Errorf("%d holdings recorded, want %d", h.Len(), n)
	}
	// An election fails the operations in flight for about a second; more
	// than that is a driver that does not fail over.
	if f := failures.Load(); f > int64(n/20) {
		t.Errorf("%d of %d operations failed across one leader's death", f, n)
	}
}
