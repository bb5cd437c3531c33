package mongodb_test

import (
	"context"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivertest"
	"github.com/distlock/lock/internal/latency"
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

func BenchmarkAcquireRelease(b *testing.B) {
	c := open(b, dsnFor(b, server(b)))
	ctx := context.Background()
	key := "bench/" + drivertest.RandomHex(4)
	var lat latency.Recorder
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
		lat.Add(time.Since(start))
	}
	latency.Report(b, "", "µs", &lat)
}

func BenchmarkAcquireRelease_parallel(b *testing.B) {
	c := open(b, dsnFor(b, server(b)))
	ctx := context.Background()
	prefix := "bench/" + drivertest.RandomHex(4) + "/"
	var next atomic.Int64
	var lat latency.Recorder
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
			lat.Add(time.Since(start))
		}
	})
	latency.Report(b, "", "µs", &lat)
}

func BenchmarkHandoff(b *testing.B) {
	c := open(b, dsnFor(b, server(b)))
	ctx := context.Background()
	key := "bench/" + drivertest.RandomHex(4)
	const goroutines = 8
	retry := lock.WithRetry(lock.FixedDelay(5 * time.Millisecond))
	var lat latency.Recorder
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
				lat.Add(time.Since(t))
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
	latency.Report(b, "wait-", "µs", &lat)
}
