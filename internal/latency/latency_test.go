package latency

import (
	"sync"
	"testing"
	"time"
)

func TestPercentiles(t *testing.T) {
	var r Recorder
	if got := r.Percentile(0.5); got != 0 {
		t.Errorf("Percentile of no samples = %v, want 0", got)
	}
	for i := 100; i >= 1; i-- {
		r.Add(time.Duration(i) * time.Millisecond)
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{0, time.Millisecond}, {0.5, 51 * time.Millisecond}, {0.99, 100 * time.Millisecond}, {1, 100 * time.Millisecond}} {
		if got := r.Percentile(c.p); got != c.want {
			t.Errorf("Percentile(%v) = %v, want %v", c.p, got, c.want)
		}
	}
}

func TestSorted_mergesRecorders(t *testing.T) {
	a, b := New(2), New(2)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			r := a
			if i%2 == 1 {
				r = b
			}
			r.Add(time.Duration(4-i) * time.Second)
		})
	}
	wg.Wait()
	got := Sorted(a, b)
	want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}
	if len(got) != len(want) {
		t.Fatalf("Sorted = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Sorted = %v, want %v", got, want)
		}
	}
}

func TestAdd_allocatesNothingWithinCapacity(t *testing.T) {
	r := New(1000)
	if n := testing.AllocsPerRun(500, func() { r.Add(time.Millisecond) }); n != 0 {
		t.Errorf("Add within capacity allocated %v times per call, want 0", n)
	}
}
