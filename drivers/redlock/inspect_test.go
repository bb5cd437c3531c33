package redlock

import (
	"context"
	"errors"
	"testing"
	"time"
)

// inspectCase is a layout of the nodes for Inspect: what each node holds
// for the key (empty: nothing), with what time left, and which hang.
type inspectCase struct {
	values []string
	ttls   []time.Duration // by node; a minute where nil
	fences []string        // by node; none where nil
	hung   []int
}

// layout puts c on the nodes.
func (c inspectCase) layout(r *Redlock, fs []*fakeNode, key string) {
	lk := r.lockKey(key)
	for i, v := range c.values {
		if v != "" {
			ttl := time.Minute
			if c.ttls != nil {
				ttl = c.ttls[i]
			}
			fs[i].hold(lk, v, ttl)
		}
		if c.fences != nil && c.fences[i] != "" {
			fs[i].keys[r.fenceKey(lk)] = c.fences[i]
		}
	}
	for _, i := range c.hung {
		fs[i].setHang(true)
	}
}

func TestInspect_holderIsTheQuorumsValue(t *testing.T) {
	r, fs := fakes(t, 5, WithFencing(true))
	inspectCase{
		values: []string{"a", "b", "a", "a", "b"},
		ttls:   []time.Duration{40 * time.Second, time.Minute, 30 * time.Second, 50 * time.Second, time.Minute},
		fences: []string{"7", "9", "6", "7", "9"},
	}.layout(r, fs, "k")
	h, held, err := r.Inspect(t.Context(), "k")
	if err != nil || !held || h.Value != "a" {
		t.Fatalf("Inspect = %+v, %v, %v; want a, held by 3 of 5", h, held, err)
	}
	// Node 1 and 4 hold b with a larger counter: not the holder's.
	if !h.Lease.Fenced || h.Lease.Token != 7 {
		t.Errorf("token = %v (fenced %v), want 7: the largest among a's nodes", h.Lease.Token, h.Lease.Fenced)
	}
	if h.TTL > 30*time.Second || h.TTL < 29*time.Second {
		t.Errorf("TTL = %v, want about 30s, the smallest among a's nodes", h.TTL)
	}
	// The round decided at a quorum; the others' requests may still be out.
	deadline := time.Now().Add(2 * time.Second)
	for i, f := range fs {
		got := f.commands()
		for len(got) == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
			got = f.commands()
		}
		if len(got) != 1 || got[0] != "INSPECT" {
			t.Errorf("node %d saw %q; want one request", i, got)
		}
	}
}

func TestInspect_nobodyWithoutAQuorum(t *testing.T) {
	cases := map[string]inspectCase{
		"free":            {values: []string{"", "", "", "", ""}},
		"split":           {values: []string{"a", "a", "b", "b", ""}},
		"minority":        {values: []string{"a", "a", "", "", ""}},
		"freeHungMinor":   {values: []string{"", "", "", "a", "a"}, hung: []int{3, 4}},
		"minorityHungOne": {values: []string{"a", "", "", "", ""}, hung: []int{4}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r, fs := fakes(t, 5)
			c.layout(r, fs, "k")
			start := time.Now()
			h, held, err := r.Inspect(t.Context(), "k")
			if err != nil || held {
				t.Fatalf("Inspect = %+v, %v, %v; want nobody", h, held, err)
			}
			if took := time.Since(start); took > 150*time.Millisecond {
				t.Errorf("Inspect took %v: it waited for hung nodes (timeout 200ms)", took)
			}
		})
	}
}

func TestInspect_hungMinorityDoesNotDelay(t *testing.T) {
	r, fs := fakes(t, 5)
	inspectCase{values: []string{"a", "a", "a", "", ""}, hung: []int{3, 4}}.layout(r, fs, "k")
	start := time.Now()
	h, held, err := r.Inspect(t.Context(), "k")
	if err != nil || !held || h.Value != "a" {
		t.Fatalf("Inspect = %+v, %v, %v; want a", h, held, err)
	}
	if took := time.Since(start); took > 150*time.Millisecond {
		t.Errorf("Inspect took %v: it waited for the hung nodes (timeout 200ms)", took)
	}
	if h.Lease.Fenced {
		t.Errorf("Inspect without fencing reports token %v", h.Lease.Token)
	}
}

// TestInspect_failedNodesCouldHoldAQuorum: when the nodes that did not
// answer could complete a quorum for a value, Inspect cannot say nobody.
func TestInspect_failedNodesCouldHoldAQuorum(t *testing.T) {
	cases := map[string]inspectCase{
		"hungMajority":       {values: []string{"", "", "", "", ""}, hung: []int{0, 1, 2}},
		"twoHoldTwoHung":     {values: []string{"a", "a", "", "", ""}, hung: []int{3, 4}},
		"oneHoldsHungMinors": {values: []string{"a", "", "", "", ""}, hung: []int{1, 2}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r, fs := fakes(t, 5)
			c.layout(r, fs, "k")
			h, held, err := r.Inspect(t.Context(), "k")
			var qe *QuorumError
			if !errors.As(err, &qe) || !errors.Is(err, context.DeadlineExceeded) || held {
				t.Fatalf("Inspect = %+v, %v, %v; want a *QuorumError wrapping the timeouts", h, held, err)
			}
			if qe.Op != "inspect" || len(qe.Errs) != len(c.hung) {
				t.Errorf("QuorumError %+v: want op inspect and %d failed nodes", qe, len(c.hung))
			}
		})
	}
}

// TestInspect_afterAcquireAndRelease runs the algorithm's own writes:
// Inspect finds the acquisition's value and token, and nobody after the
// release, on one node and on five.
func TestInspect_afterAcquireAndRelease(t *testing.T) {
	for _, n := range []int{1, 5} {
		r, fs := fakes(t, n, WithFencing(true))
		lk := r.lockKey("k")
		for _, f := range fs {
			f.keys[r.fenceKey(lk)] = "41"
		}
		lease, err := r.Acquire(t.Context(), "k", "v1", 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		h, held, err := r.Inspect(t.Context(), "k")
		if err != nil || !held || h.Value != "v1" || h.Lease != lease || lease.Token != 42 {
			t.Errorf("N=%d: Inspect = %+v, %v, %v; want v1 with the lease %+v (token 42)", n, h, held, err, lease)
		}
		if h.TTL <= 9*time.Second || h.TTL > 10*time.Second {
			t.Errorf("N=%d: TTL = %v, want just under 10s", n, h.TTL)
		}
		if err := r.Release(t.Context(), "k", "v1"); err != nil {
			t.Fatal(err)
		}
		if h, held, err := r.Inspect(t.Context(), "k"); err != nil || held {
			t.Errorf("N=%d: Inspect after Release = %+v, %v, %v; want nobody", n, h, held, err)
		}
	}
}

func TestParseInspection_refusesOddReplies(t *testing.T) {
	for _, reply := range []any{
		"OK",
		[]any{"v", int64(1)},
		[]any{"v", "1", ""},
		[]any{"v", int64(1), "x"},
		[]any{int64(3), int64(1), ""},
	} {
		if in, err := parseInspection(reply); err == nil {
			t.Errorf("parseInspection(%#v) = %+v, want an error", reply, in)
		}
	}
	in, err := parseInspection([]any{"v", int64(5), "18446744073709551615"})
	if err != nil || in.fence != 1<<64-1 || in.value != "v" || in.pttl != 5 {
		t.Errorf("parseInspection of a counter of 2^64-1 = %+v, %v", in, err)
	}
}
