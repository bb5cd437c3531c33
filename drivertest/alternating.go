package drivertest

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock/internal/latency"
)

// Contender is one of the implementations that [BenchAlternating] runs
// side by side: Op acquires and releases key once.
type Contender struct {
	Name string
	Op   func(key string) error
}

// window is how long each contender runs at a time in BenchAlternating.
const window = 100 * time.Millisecond

// settle is the pause before each window, unmeasured: what a window left
// running (requests still out to slower servers, a garbage collection)
// ends in it rather than in the next contender's window.
const settle = 5 * time.Millisecond

// BenchAlternating measures contenders side by side: goroutines
// goroutines, each on a key of its own, run one contender at a time for
// 100ms windows. Every iteration is a window of each contender, in an
// order drawn at random each iteration, after a pause of 5ms. So all meet
// the same load from the rest of the machine and the same state of the
// backend, and none always follows the same contender: with the order
// only turned by one each iteration, each contender always followed the
// same one, and a second copy of the first contender, as a control,
// measured up to 7% faster than the first, which followed the last.
// Each contender runs a window before the measurement, to open its
// connections.
//
// It reports, for each contender, the metrics "ops/s:"+name;
// "cpu-µs/op:"+name, the process's CPU time during its windows (user and
// system, as the kernel accounts it, garbage collection included) per
// operation; and "p50-µs:"+name, the median of its operations' latencies.
// For each contender after the first, it also reports "ops-ratio:"+name,
// "cpu-ratio:"+name and "p50-ratio:"+name, its rate, its CPU per
// operation and its median latency divided by the first contender's in
// the same run. On a machine whose cores the
// benchmark shares with the backend, CPU per operation is the steadier
// figure: wall-clock rates move with the load.
//
// To compare contenders across runs with benchstat, give each its own
// line: SplitContenders in README.md's commands (drivers/postgres) does
// it with awk.
func BenchAlternating(b *testing.B, goroutines int, contenders ...Contender) {
	prefix := "alternating/" + RandomHex(4) + "/"
	n := len(contenders)
	ops := make([]int64, n)
	took := make([]time.Duration, n)
	cpu := make([]time.Duration, n)
	lat := make([][]*latency.Recorder, n)
	for i := range lat {
		lat[i] = make([]*latency.Recorder, goroutines)
		for g := range lat[i] {
			lat[i][g] = latency.New(1 << 14)
		}
	}
	run := func(which int, measure bool) {
		var wg sync.WaitGroup
		counts := make([]int64, goroutines)
		op := contenders[which].Op
		start, cpu0 := time.Now(), latency.CPUTime()
		deadline := start.Add(window)
		for g := range goroutines {
			key := prefix + strconv.Itoa(g)
			rec := lat[which][g]
			wg.Go(func() {
				var k int64
				defer func() { counts[g] = k }()
				for {
					t0 := time.Now()
					if !t0.Before(deadline) {
						return
					}
					if err := op(key); err != nil {
						b.Error(err)
						return
					}
					if measure {
						rec.Add(time.Since(t0))
					}
					k++
				}
			})
		}
		wg.Wait()
		if !measure {
			return
		}
		cpu[which] += latency.CPUTime() - cpu0
		took[which] += time.Since(start)
		for _, k := range counts {
			ops[which] += k
		}
	}
	for i := range contenders {
		run(i, false)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, i := range rand.Perm(n) {
			time.Sleep(settle)
			run(i, true)
		}
	}
	rate := func(i int) float64 { return float64(ops[i]) / took[i].Seconds() }
	perOp := func(i int) float64 { return float64(cpu[i]) / float64(time.Microsecond) / float64(max(ops[i], 1)) }
	p50 := make([]float64, n)
	for i := range contenders {
		p50[i] = float64(latency.Percentile(latency.Sorted(lat[i]...), 0.5)) / 1e3
	}
	for i, c := range contenders {
		b.ReportMetric(rate(i), "ops/s:"+c.Name)
		b.ReportMetric(perOp(i), "cpu-µs/op:"+c.Name)
		b.ReportMetric(p50[i], "p50-µs:"+c.Name)
		if i > 0 && ops[0] > 0 && ops[i] > 0 {
			b.ReportMetric(rate(i)/rate(0), "ops-ratio:"+c.Name)
			b.ReportMetric(perOp(i)/perOp(0), "cpu-ratio:"+c.Name)
			b.ReportMetric(p50[i]/p50[0], "p50-ratio:"+c.Name)
		}
	}
}
