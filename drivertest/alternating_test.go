package drivertest

import (
	"crypto/sha256"
	"testing"
)

// spin burns CPU in proportion to n, as an operation of a contender.
func spin(n int) func(string) error {
	return func(key string) error {
		sum := sha256.Sum256([]byte(key))
		for range n {
			sum = sha256.Sum256(sum[:])
		}
		return nil
	}
}

// BenchAlternating reports each contender's rate, CPU and latency, and
// the CPU and latency ratios tell a contender that works four times as
// hard.
func TestBenchAlternating_tellsCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("runs windows of 100ms for about a second")
	}
	r := testing.Benchmark(func(b *testing.B) {
		BenchAlternating(b, 2, Contender{"light", spin(200)}, Contender{"heavy", spin(800)})
	})
	for _, m := range []string{"ops/s:light", "ops/s:heavy", "cpu-µs/op:light", "cpu-µs/op:heavy", "p50-µs:light", "p50-µs:heavy"} {
		if r.Extra[m] <= 0 {
			t.Errorf("metric %s = %v, want it reported and positive (all: %v)", m, r.Extra[m], r.Extra)
		}
	}
	if ratio := r.Extra["cpu-ratio:heavy"]; ratio < 2 {
		t.Errorf("cpu-ratio:heavy = %v, want about 4 (all: %v)", ratio, r.Extra)
	}
	if ratio := r.Extra["ops-ratio:heavy"]; ratio <= 0 || ratio > 0.8 {
		t.Errorf("ops-ratio:heavy = %v, want about 1/4 (all: %v)", ratio, r.Extra)
	}
	if ratio := r.Extra["p50-ratio:heavy"]; ratio < 2 {
		t.Errorf("p50-ratio:heavy = %v, want about 4 (all: %v)", ratio, r.Extra)
	}
}
