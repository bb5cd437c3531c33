package latency

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Handoff runs goroutines that take turns on one resource b.N times in
// all, each holding it for hold, and reports to b the rates (acq/s, and
// handoffs/s: acquisitions by another goroutine than the last), the wait's
// p50, p99 and maximum, and the gap of a handoff (from the moment a holder
// starts to release to the moment another goroutine has the resource).
// take acquires for goroutine g and returns how to release.
func Handoff(b *testing.B, goroutines int, hold time.Duration, take func(ctx context.Context, g int) (release func() error, err error)) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var (
		left, last, handoffs atomic.Int64
		released, maxWait    atomic.Int64 // when the last release began (ns since start); the longest wait
		wait, gap            Recorder
		wg                   sync.WaitGroup
	)
	left.Store(int64(b.N))
	last.Store(-1)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for g := range goroutines {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				t0 := time.Now()
				release, err := take(ctx, g)
				if err != nil {
					b.Error(err)
					return
				}
				w := time.Since(t0)
				wait.Add(w)
				for m := maxWait.Load(); int64(w) > m && !maxWait.CompareAndSwap(m, int64(w)); m = maxWait.Load() {
				}
				if last.Swap(int64(g)) != int64(g) {
					handoffs.Add(1)
					if r := released.Load(); r > 0 {
						gap.Add(time.Since(start) - time.Duration(r))
					}
				}
				time.Sleep(hold)
				released.Store(int64(time.Since(start)))
				if err := release(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "acq/s")
	b.ReportMetric(float64(handoffs.Load())/elapsed.Seconds(), "handoffs/s")
	Report(b, "wait-", "µs", &wait)
	b.ReportMetric(float64(maxWait.Load())/1e6, "wait-max-ms")
	Report(b, "gap-", "µs", &gap)
}
