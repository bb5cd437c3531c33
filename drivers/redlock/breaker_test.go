package redlock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"
)

// requests counts the commands f received.
func (f *fakeNode) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked
}

// Two of five nodes hang under a load of acquisitions: after a few
// timeouts, one request at a time goes to each, so the goroutines waiting
// on them stay few; once they answer again, the next round uses them. The
// timeouts come as the context's error, or as Redis clients report them:
// a socket's "i/o timeout", perhaps before the context's timer has fired.
func TestBreaker_boundsRequestsToHungNodesAndRecovers(t *testing.T) {
	for _, socket := range []bool{false, true} {
		name := "context"
		if socket {
			name = "socket"
		}
		t.Run(name, func(t *testing.T) { testBreaker(t, socket) })
	}
}

func testBreaker(t *testing.T, socketTimeouts bool) {
	r, fs := fakes(t, 5) // a fixed 200ms node timeout
	for _, f := range fs[3:] {
		f.mu.Lock()
		f.hang, f.socketTimeouts = true, socketTimeouts
		f.mu.Unlock()
	}
	base := runtime.NumGoroutine()
	var (
		wg   sync.WaitGroup
		peak int
		mu   sync.Mutex
	)
	stop := time.Now().Add(time.Second)
	for g := range 8 {
		wg.Go(func() {
			for i := 0; time.Now().Before(stop); i++ {
				key := fmt.Sprintf("k%d-%d", g, i)
				if _, err := r.Acquire(t.Context(), key, "v", time.Minute); err != nil {
					t.Errorf("Acquire with 2 of 5 hung: %v", err)
					return
				}
				r.Release(t.Context(), key, "v")
				mu.Lock()
				peak = max(peak, runtime.NumGoroutine()-base)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, f := range fs[3:] {
		// A probe at a time: at most one per 200ms timeout, plus the first
		// timeouts and the releases' (which go out at once, as acquisitions do).
		if n := f.requests(); n > 40 {
			t.Errorf("a hung node got %d requests in 1s with a 200ms timeout: its breaker did not hold them", n)
		}
	}
	waiting := 0
	for _, f := range fs[3:] {
		f.mu.Lock()
		waiting += f.peakWaiting
		f.mu.Unlock()
	}
	if waiting > 2*maxSilentInflight+2 {
		t.Errorf("up to %d requests waited on the hung nodes at once, want at most %d a node", waiting, maxSilentInflight)
	}
	t.Logf("peak: %d requests waiting on the hung nodes, %d goroutines more than at the start (8 of them the test's)", waiting, peak)
	fs[3].setHang(false)
	fs[4].setHang(false)
	time.Sleep(250 * time.Millisecond) // the probes out while hung time out
	deadline := time.Now().Add(2 * time.Second)
	for before := fs[4].requests(); time.Now().Before(deadline); {
		r.Acquire(t.Context(), "again", "v", time.Minute)
		r.Release(t.Context(), "again", "v")
		if fs[4].requests() > before+3 {
			return // asked at every round again
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Error("a node that answers again was not asked at every round within 2s")
}

func TestIsTimeout(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{context.DeadlineExceeded, true},
		{fmt.Errorf("node 1: %w", context.DeadlineExceeded), true},
		{&net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, true}, // "i/o timeout"
		{nil, false},
		{context.Canceled, false},
		{errors.New("connection refused"), false},
	} {
		if got := IsTimeout(c.err); got != c.want {
			t.Errorf("IsTimeout(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
