package postgres

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestInterval_roundsUp(t *testing.T) {
	for _, tc := range []struct {
		ttl  time.Duration
		want int64 // microseconds
	}{
		{10 * time.Millisecond, 10000},
		{10*time.Millisecond + time.Nanosecond, 10001},
		{10*time.Millisecond + 999*time.Nanosecond, 10001},
		{10*time.Millisecond + time.Microsecond, 10001},
		{30 * 24 * time.Hour, 30 * 24 * 3600 * 1e6},
	} {
		if got := interval(tc.ttl); !got.Valid || got.Microseconds != tc.want || got.Days != 0 || got.Months != 0 {
			t.Errorf("interval(%v) = %+v, want %dµs", tc.ttl, got, tc.want)
		}
	}
}

// The fast path's count never lets more calls through tryTake than the
// pool has connections, under contention too, and a slow call counted by
// take keeps a fast one off the connection it waits for.
func TestSlots_neverOverTheSize(t *testing.T) {
	const size = 4
	s := newSlots(size)
	var in, most atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 2000 {
				if !s.tryTake() {
					continue
				}
				n := in.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				in.Add(-1)
				s.give()
			}
		})
	}
	wg.Wait()
	if m := most.Load(); m > size || m == 0 {
		t.Errorf("at most %d calls in at once through tryTake, want 1 to %d", m, size)
	}
	if n := s.n.Load(); n != 0 {
		t.Fatalf("the count is %d after every call gave back, want 0", n)
	}
	for range size - 1 {
		if !s.tryTake() {
			t.Fatal("tryTake refused under the size")
		}
	}
	s.take() // a slow call waiting in the pool
	if s.tryTake() {
		t.Error("tryTake counted a call with every connection in use or waited for")
	}
	s.give()
	if !s.tryTake() {
		t.Error("tryTake refused once the slow call gave back")
	}
}
