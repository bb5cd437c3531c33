package drivertest

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/internal/latency"
)

// BenchAcquireRelease measures one uncontended TryAcquire and Release of a
// key of its own on c, beside baseline, the same done by hand with the
// backend's own client (what the driver's users would write without it),
// named baselineName. Each runs once before the timer starts (the first
// connections, the first lease). The sub-benchmarks are "driver" and
// baselineName, each with its latency's p50 and p99, and "paired", which
// alternates the two call by call, so that both meet the same backend
// state and the same load from the rest of the machine, and reports both
// p50s and their ratio: the figure to judge the driver by.
func BenchAcquireRelease(b *testing.B, c *lock.Client, baselineName string, baseline func(b *testing.B)) {
	key := "bench/" + RandomHex(4)
	op := AcquireRelease(c)
	ops := [2]func(*testing.B){
		func(b *testing.B) {
			if err := op(key); err != nil {
				b.Fatal(err)
			}
		},
		baseline,
	}
	ops[0](b)
	ops[1](b)
	for i, name := range []string{"driver", baselineName} {
		b.Run(name, func(b *testing.B) {
			var lat latency.Recorder
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				ops[i](b)
				lat.Add(time.Since(start))
			}
			latency.Report(b, "", "µs", &lat)
		})
	}
	b.Run("paired", func(b *testing.B) { BenchPaired(b, ops[0], ops[1]) })
}

// BenchPaired alternates driver and baseline call by call, so that both
// meet the same backend state and the same load from the rest of the
// machine. It reports both p50s and their ratio.
func BenchPaired(b *testing.B, driver, baseline func(b *testing.B)) {
	ops := [2]func(*testing.B){driver, baseline}
	var lat [2]latency.Recorder
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		ops[i%2](b)
		lat[i%2].Add(time.Since(start))
	}
	d, base := lat[0].Percentile(0.5), lat[1].Percentile(0.5)
	b.ReportMetric(float64(d)/1e3, "driver-p50-µs")
	b.ReportMetric(float64(base)/1e3, "baseline-p50-µs")
	if base > 0 {
		b.ReportMetric(float64(d)/float64(base), "p50-ratio")
	}
}

// AcquireRelease returns one TryAcquire and Release of a key through c,
// under context.Background(): the operation that the benchmarks run
// through the library, as a [Contender]'s Op.
func AcquireRelease(c *lock.Client) func(key string) error {
	ctx := context.Background()
	return func(key string) error {
		l, err := c.TryAcquire(ctx, key)
		if err != nil {
			return err
		}
		return l.Release(ctx)
	}
}

// Take acquires the resource of a handoff benchmark for goroutine g, and
// returns how to release it.
type Take func(ctx context.Context, g int) (release func() error, err error)

// BenchHandoff measures 8 goroutines taking turns on one key, each holding
// it for 1ms, through clients that open returns: one client shared, then
// one client each (sub-benchmarks "driver/clients=1" and
// "driver/clients=8"), beside the baseline, named baselineName, whose Take
// newBaseline makes within its sub-benchmark. The
// driver's waiters poll only once a minute, so that wake-ups on release do
// all the work. Each reports the rates of acquisitions and handoffs, and
// the wait's p50, p99 and maximum.
func BenchHandoff(b *testing.B, open func(b *testing.B) *lock.Client, baselineName string, newBaseline func(b *testing.B) Take) {
	const (
		goroutines = 8
		hold       = time.Millisecond
	)
	poll := lock.WithRetry(lock.FixedDelay(time.Minute))
	for _, nclients := range []int{1, goroutines} {
		clients := make([]*lock.Client, nclients)
		for i := range clients {
			clients[i] = open(b)
		}
		b.Run("driver/clients="+strconv.Itoa(nclients), func(b *testing.B) {
			key := "handoff/" + RandomHex(4)
			latency.Handoff(b, goroutines, hold, func(ctx context.Context, g int) (func() error, error) {
				l, err := clients[g%nclients].Acquire(ctx, key, poll)
				if err != nil {
					return nil, err
				}
				return func() error { return l.Release(ctx) }, nil
			})
		})
	}
	b.Run(baselineName, func(b *testing.B) {
		latency.Handoff(b, goroutines, hold, newBaseline(b))
	})
}

// BenchParallelPaired measures goroutines goroutines, each on a key of its
// own, running driver and then baseline (each one acquisition and release
// of the key it is given) in turns of 100ms windows: every iteration is a
// window of each, the one first in turn. So both meet the same load from
// the rest of the machine and the same state of the backend (run in
// blocks of their own, the rates of a shared machine move by 2x between
// blocks). It reports both rates and their ratio, the figure to judge the
// driver's throughput by.
func BenchParallelPaired(b *testing.B, goroutines int, driver, baseline func(key string) error) {
	ops := [2]func(key string) error{driver, baseline}
	prefix := "paired/" + RandomHex(4) + "/"
	var done [2]int64
	var took [2]time.Duration
	window := func(which int) {
		var n atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		deadline := start.Add(100 * time.Millisecond)
		for g := range goroutines {
			key := prefix + strconv.Itoa(g)
			wg.Go(func() {
				for time.Now().Before(deadline) {
					if err := ops[which](key); err != nil {
						b.Error(err)
						return
					}
					n.Add(1)
				}
			})
		}
		wg.Wait()
		done[which] += n.Load()
		took[which] += time.Since(start)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		window(i % 2)
		window(1 - i%2)
	}
	d, base := float64(done[0])/took[0].Seconds(), float64(done[1])/took[1].Seconds()
	b.ReportMetric(d, "driver-ops/s")
	b.ReportMetric(base, "baseline-ops/s")
	if base > 0 {
		b.ReportMetric(d/base, "ops-ratio")
	}
}
