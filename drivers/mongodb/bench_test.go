package mongodb_test

import (
	"context"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distlock/lock"
)

// The benchmarks measure the driver through the lock package:
//
//   - BenchmarkAcquireRelease: one uncontended acquisition and release
//     (three round trips, all by _id: find the next grant, insert it;
//     insert the tombstone). Reports the latency's p50 and p99.
//   - BenchmarkAcquireRelease_parallel: the same from 16 goroutines on
//     distinct keys.
//   - BenchmarkHandoff: 8 goroutines taking turns on one key, each holding
//     it for 1ms. The driver has no wake-ups, so waiters poll every 5ms
//     here; reports acquisitions per second and the wait's p50 and p99.

// latencies collects durations and reports percentiles.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

func (l *latencies) percentile(p float64) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return 0
	}
	slices.Sort(l.d)
	return l.d[min(int(float64(len(l.d))*p), len(l.d)-1)]
}

func (l *latencies) report(b *testing.B, prefix string) {
	b.ReportMetric(float64(l.percentile(0.50).Microseconds()), prefix+"p50-µs")
	b.ReportMetric(float64(l.percentile(0.99).Microseconds()), prefix+"p99-µs")
}

func BenchmarkAcquireRelease(b *testing.B) {
	c := open(b, dsnFor(b, server(b)))
	ctx := context.Background()
	key := "bench/" + randomHex(4)
	var lat latencies
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		l, err := c.TryAcquire(ctx, key)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			b.Fatal(err)
		}
		lat.add(time.Since(start))
	}
	lat.report(b, "")
}

func BenchmarkAcquireRelease_parallel(b *testing.B) {
	c := open(b, dsnFor(b, server(b)))
	ctx := context.Background()
	prefix := "bench/" + randomHex(4) + "/"
	var next atomic.Int64
	var lat latencies
	b.ReportAllocs()
	b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
	b.RunParallel(func(pb *testing.PB) {
		key := prefix + strconv.FormatInt(next.Add(1), 10)
		for pb.Next() {
			start := time.Now()
			l, err := c.TryAcquire(ctx, key)
			if err != nil {
				b.Error(err)
				return
			}
			if err := l.Release(ctx); err != nil {
				b.Error(err)
				return
			}
			lat.add(time.Since(start))
		}
	})
	lat.report(b, "")
}

func BenchmarkHandoff(b *testing.B) {
	c := open(b, dsnFor(b, server(b)))
	ctx := context.Background()
	key := "bench/" + randomHex(4)
	const goroutines = 8
	retry := lock.WithRetry(lock.FixedDelay(5 * time.Millisecond))
	var lat latencies
	var left atomic.Int64
	left.Store(int64(b.N))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				t := time.Now()
				l, err := c.Acquire(ctx, key, retry)
				if err != nil {
					b.Error(err)
					return
				}
				lat.add(time.Since(t))
				time.Sleep(time.Millisecond)
				if err := l.Release(ctx); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "acq/s")
	lat.report(b, "wait-")
}
