package memory_test

import (
	"context"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/memory"
)

// BenchmarkMemoryAcquireRelease measures the core's own cost: one
// uncontended TryAcquire and Release on the in-process driver.
func BenchmarkMemoryAcquireRelease(b *testing.B) {
	c := lock.OpenConnector(memory.New())
	defer c.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		l, err := c.TryAcquire(ctx, "bench")
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMemoryAcquireRelease_parallel runs GOMAXPROCS goroutines on
// distinct keys through one client.
func BenchmarkMemoryAcquireRelease_parallel(b *testing.B) {
	c := lock.OpenConnector(memory.New())
	defer c.Close()
	ctx := context.Background()
	var n atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		key := "bench/" + strconv.FormatInt(n.Add(1), 10)
		for pb.Next() {
			l, err := c.TryAcquire(ctx, key)
			if err != nil {
				b.Error(err)
				return
			}
			l.Release(ctx)
		}
	})
}

// BenchmarkMemoryContended runs 8 goroutines taking turns at one key
// through one client with Acquire, so that it measures the core's waiting:
// the per-key queue, wake-ups on release and handovers.
func BenchmarkMemoryContended(b *testing.B) {
	c := lock.OpenConnector(memory.New())
	defer c.Close()
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(8 / max(runtime.GOMAXPROCS(0), 1))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l, err := c.Acquire(ctx, "bench")
			if err != nil {
				b.Error(err)
				return
			}
			if err := l.Release(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
