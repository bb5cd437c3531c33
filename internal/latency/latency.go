// Package latency records durations in benchmarks and reports their
// percentiles as benchmark metrics. The drivers' benchmarks and the bench
// module at the repository's root share it.
package latency

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// Recorder records durations. It is safe for concurrent use; goroutines
// that record a great many samples at once do better with a Recorder each,
// merged when reported. The zero Recorder is ready to use.
type Recorder struct {
	mu sync.Mutex
	d  []time.Duration
}

// New returns a Recorder with room for capacity samples: Add allocates
// nothing until it holds that many, so that a benchmark's allocs/op count
// only what it measures.
func New(capacity int) *Recorder {
	return &Recorder{d: make([]time.Duration, 0, capacity)}
}

// Add records d.
func (r *Recorder) Add(d time.Duration) {
	r.mu.Lock()
	r.d = append(r.d, d)
	r.mu.Unlock()
}

// Percentile returns the p-th quantile (0 <= p <= 1) of r's samples, or 0
// if there are none.
func (r *Recorder) Percentile(p float64) time.Duration {
	return Percentile(Sorted(r), p)
}

// Sorted returns the samples of all of rs, sorted.
func Sorted(rs ...*Recorder) []time.Duration {
	var all []time.Duration
	for _, r := range rs {
		r.mu.Lock()
		all = append(all, r.d...)
		r.mu.Unlock()
	}
	slices.Sort(all)
	return all
}

// Percentile returns the p-th quantile (0 <= p <= 1) of sorted, or 0 if it
// is empty.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, max(0, int(p*float64(len(sorted)))))]
}

// Report reports the 50th and 99th percentiles of the samples of all of rs
// to b, in unit ("µs" or "ms"), as the metrics prefix+"p50-"+unit and
// prefix+"p99-"+unit. It reports nothing if there are no samples.
func Report(b *testing.B, prefix, unit string, rs ...*Recorder) {
	all := Sorted(rs...)
	if len(all) == 0 {
		return
	}
	scale := float64(time.Microsecond)
	if unit == "ms" {
		scale = float64(time.Millisecond)
	}
	b.ReportMetric(float64(Percentile(all, 0.50))/scale, prefix+"p50-"+unit)
	b.ReportMetric(float64(Percentile(all, 0.99))/scale, prefix+"p99-"+unit)
}

// ReportCPU reports to b the process's CPU time (see CPUTime) since
// start, a CPUTime reading taken before the loop, per operation, as the
// metric "cpu-µs/op".
func ReportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(CPUTime()-start)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
}
