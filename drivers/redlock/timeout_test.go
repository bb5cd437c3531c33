package redlock

import (
	"fmt"
	"testing"
	"time"
)

// slowFakes returns a Redlock with default options over n fake nodes whose
// requests each take d, and are dropped if their context ends first, as on
// a link with round trips of d.
func slowFakes(t *testing.T, n int, d time.Duration, opts ...Option) (*Redlock, []*fakeNode) {
	t.Helper()
	fs := make([]*fakeNode, n)
	nodes := make([]Node, n)
	for i := range fs {
		fs[i] = newFake(fmt.Sprintf("node%d", i))
		fs[i].slow = d
		nodes[i] = fs[i]
	}
	r, err := New(nodes, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, fs
}

// With the defaults, locks work on links of 60ms and 200ms round trips,
// where a fixed 50ms timeout fails every request.
func TestNodeTimeout_adaptsToSlowLinks(t *testing.T) {
	for _, rtt := range []time.Duration{60 * time.Millisecond, 200 * time.Millisecond} {
		t.Run(rtt.String(), func(t *testing.T) {
			r, _ := slowFakes(t, 5, rtt)
			for i := range 5 {
				key := fmt.Sprintf("k%d", i)
				if _, err := r.Acquire(t.Context(), key, "v", 10*time.Second); err != nil {
					t.Fatalf("Acquire %d with %v round trips: %v", i, rtt, err)
				}
				if err := r.Release(t.Context(), key, "v"); err != nil {
					t.Fatalf("Release %d with %v round trips: %v", i, rtt, err)
				}
			}
			if got := r.roundTimeout(10 * time.Second); got < 3*rtt || got > MaxNodeTimeout {
				t.Errorf("adaptive timeout after a few rounds = %v, want at least 3 round trips (%v) and at most %v", got, 3*rtt, MaxNodeTimeout)
			}
			// A fixed timeout shorter than the round trips gives no node
			// up either: they are all slow together, which is no hang.
			// The round waits for them past it, up to its limit.
			fixed, _ := slowFakes(t, 5, rtt, WithNodeTimeout(DefaultNodeTimeout))
			start := time.Now()
			if _, err := fixed.Acquire(t.Context(), "k", "v", 10*time.Second); err != nil {
				t.Errorf("with a fixed %v timeout, Acquire over %v round trips: %v", DefaultNodeTimeout, rtt, err)
			}
			if took := time.Since(start); took < rtt {
				t.Errorf("with a fixed %v timeout, Acquire over %v round trips took %v: the test shows nothing", DefaultNodeTimeout, rtt, took)
			}
		})
	}
}

// The adaptive timeout stays short on a fast link, so that a hung
// majority fails an acquisition quickly.
func TestNodeTimeout_shortOnFastLinks(t *testing.T) {
	r, fs := slowFakes(t, 5, time.Millisecond)
	// At least 10 pings; more while the estimate is above the floor, since
	// on a loaded machine one ping in a run can take tens of milliseconds
	// (once: an estimate of 118ms after 10), and the estimate must come
	// back down from that.
	got := MaxNodeTimeout
	for i := 0; i < 10 || (got != DefaultNodeTimeout && i < 200); i++ {
		if err := r.Ping(t.Context()); err != nil {
			t.Fatal(err)
		}
		got = r.roundTimeout(10 * time.Second)
	}
	if got != DefaultNodeTimeout {
		t.Errorf("adaptive timeout on a 1ms link after 200 pings = %v, want the floor %v", got, DefaultNodeTimeout)
	}
	for _, f := range fs[:3] {
		f.setHang(true)
	}
	start := time.Now()
	if _, err := r.Acquire(t.Context(), "k", "v", 10*time.Second); err == nil {
		t.Fatal("Acquire succeeded with 3 of 5 nodes hung")
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("Acquire with a hung majority took %v, want about the 50ms timeout", took)
	}
}

// Nodes that slow down together past the timeout (a loaded machine, a
// link that got slower) are not given up: a node is given up only when it
// is silent while others answer. Their answers then teach the estimate
// the slower pace. (Before, each ping timed out until the timeout had
// backed off past the round trips, and the first failed.)
func TestNodeTimeout_slowTogetherIsNoHang(t *testing.T) {
	r, fs := slowFakes(t, 5, time.Millisecond)
	for range 10 {
		if err := r.Ping(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	slow := 3 * DefaultNodeTimeout / 2
	for _, f := range fs {
		f.mu.Lock()
		f.slow = slow
		f.mu.Unlock()
	}
	for i := range 5 {
		start := time.Now()
		if err := r.Ping(t.Context()); err != nil {
			t.Fatalf("ping %d on nodes that all answer in %v, past the %v timeout: %v", i, slow, DefaultNodeTimeout, err)
		}
		if took := time.Since(start); took < slow {
			t.Fatalf("ping %d took %v: the nodes were not slow, and the test shows nothing", i, took)
		}
	}
	if got := r.roundTimeout(10 * time.Second); got <= DefaultNodeTimeout {
		t.Errorf("adaptive timeout after 5 answers in %v = %v, want it to have learned the slower pace", slow, got)
	}
}

// A node dead since the start does not make every round wait the longest.
func TestNodeTimeout_deadNodeTakesTheOthers(t *testing.T) {
	r, fs := slowFakes(t, 5, time.Millisecond)
	fs[4].setHang(true)
	for range 5 {
		r.Ping(t.Context())
	}
	if got := r.roundTimeout(10 * time.Second); got != DefaultNodeTimeout {
		t.Errorf("timeout with a node that never answered = %v, want the others' (%v)", got, DefaultNodeTimeout)
	}
}

func TestNodeTimeout_boundedByTTL(t *testing.T) {
	r, _ := slowFakes(t, 3, 0)
	if got := r.roundTimeout(400 * time.Millisecond); got != 100*time.Millisecond {
		t.Errorf("timeout before any answer for a 400ms TTL = %v, want a quarter of it", got)
	}
	if got := r.roundTimeout(0); got != MaxNodeTimeout {
		t.Errorf("timeout before any answer = %v, want %v", got, MaxNodeTimeout)
	}
}
