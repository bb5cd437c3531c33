package benchmark

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	_ "github.com/distlock/lock/drivers/goredis"
	_ "github.com/distlock/lock/drivers/memory"
	"github.com/distlock/lock/locktest"
)

// memoryClient opens a client on a memory store of the test's own.
func memoryClient(t *testing.T, store string) *lock.Client {
	t.Helper()
	c, err := lock.Open("memory", "benchmark-test/"+t.Name()+"/"+store)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestCycle_countsOperationsAndLatency(t *testing.T) {
	c := memoryClient(t, "")
	for _, n := range []int{1, KeysGoroutines} {
		start := time.Now()
		f := Cycle(t.Context(), c, NewKeys(), "cycle", n, 100*time.Millisecond)
		if took := time.Since(start); took > time.Second {
			t.Errorf("Cycle for 100ms took %v", took)
		}
		if !f.OK() || f.Ops == 0 || f.Failed != 0 || f.Latency == nil || f.PerSecond <= 0 {
			t.Errorf("Cycle(%d goroutines) = %+v", n, f)
		}
		if f.Seconds < 0.1 {
			t.Errorf("Cycle measured %vs, want 100ms or more", f.Seconds)
		}
	}
	if st := c.Stats(); st.Acquired != st.Released {
		t.Errorf("acquired %d, released %d: keys left held", st.Acquired, st.Released)
	}
}

// A measurement whose first operation comes after its duration (a first
// connection on a loaded machine) goes on until it does, instead of
// failing; one where none succeeds ends max(d, 2s) past its duration.
func TestCycle_waitsForTheFirstOperation(t *testing.T) {
	b := locktest.New()
	c := lock.OpenConnector(b)
	defer c.Close()
	b.Unavailable(300 * time.Millisecond)
	// The 300ms count from Unavailable, a moment before Cycle begins: the
	// first success comes a little under 300ms into the measurement (291ms
	// seen), but long after its 50ms.
	f := Cycle(t.Context(), c, NewKeys(), "cycle", 1, 50*time.Millisecond)
	if !f.OK() || f.Ops == 0 || f.Seconds < 0.2 || f.Seconds > 1 {
		t.Errorf("Cycle of 50ms whose backend answers after 300ms = %+v", f)
	}
}

func TestCycle_closedClientFails(t *testing.T) {
	c := memoryClient(t, "")
	c.Close()
	f := Cycle(t.Context(), c, NewKeys(), "cycle", 2, 20*time.Millisecond)
	if f.OK() || !strings.Contains(f.Error, "no operation succeeded") || !strings.Contains(f.Error, "closed") || f.Failed == 0 {
		t.Errorf("Cycle on a closed client = %+v", f)
	}
}

func TestHandoffs_everyAcquisitionWaitsForAHolder(t *testing.T) {
	for _, clients := range []int{1, HandoffGoroutines} {
		var cs []*lock.Client
		for range clients {
			cs = append(cs, memoryClient(t, "shared"))
		}
		f := Handoffs(t.Context(), cs, NewKeys().Next("handoffs"), HandoffGoroutines, time.Millisecond, 200*time.Millisecond)
		if !f.OK() || f.Ops < 10 || f.Failed != 0 {
			t.Fatalf("Handoffs(%d clients) = %+v", clients, f)
		}
		// At most one acquisition per hold, and the median waiter waits
		// for several holders.
		if max := 0.2 / time.Millisecond.Seconds(); float64(f.Ops) > max+1 {
			t.Errorf("%d handoffs in 200ms of 1ms holds", f.Ops)
		}
		if f.Latency.P50 < 1000 {
			t.Errorf("wait p50 %vµs, want a hold (1ms) or more", f.Latency.P50)
		}
	}
}

func TestHandoffs_failingBackendReported(t *testing.T) {
	c, err := lock.Open(brokenDriverName, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetLogger(slog.New(slog.DiscardHandler)) // its warnings that cleanup failed
	f := Handoffs(t.Context(), []*lock.Client{c}, "k/shared/1", 2, time.Millisecond, 100*time.Millisecond)
	if f.OK() || !strings.Contains(f.Error, errBackendDown.Error()) {
		t.Errorf("Handoffs on a backend that is down = %+v", f)
	}
}

func TestKeys_uniqueWithRunPrefix(t *testing.T) {
	a, b := NewKeys(), NewKeys()
	if a.Prefix() == b.Prefix() {
		t.Errorf("two runs share the prefix %q", a.Prefix())
	}
	k1, k2 := a.Next("x"), a.Next("x")
	if k1 == k2 || !strings.HasPrefix(k1, a.Prefix()+"x/") {
		t.Errorf("keys %q, %q", k1, k2)
	}
}
