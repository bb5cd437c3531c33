package redlock

import (
	"slices"
	"strconv"
	"testing"
	"time"
)

// A fenced acquisition writes its token on every node that answers, not
// only on the quorum that granted it. So after two nodes restart empty at
// N=5, and a third is hung, the next acquisition, on the two restarted
// nodes and the two others, still draws a greater token. (Written on the
// granting quorum only, the token was on three nodes; with two of them
// restarted and the third hung, the next quorum drew it again.)
func TestFence_writesTheTokenOnEveryNode(t *testing.T) {
	r, fs := fakes(t, 5, WithFencing(true))
	first, err := r.Acquire(t.Context(), "k", "v1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	fk := r.fenceKey(r.lockKey("k"))
	counter := func(f *fakeNode) int64 {
		f.mu.Lock()
		defer f.mu.Unlock()
		n, _ := strconv.ParseInt(f.keys[fk], 10, 64)
		return n
	}
	// The fence round returns at a quorum; its other requests end soon.
	deadline := time.Now().Add(2 * time.Second)
	for slices.ContainsFunc(fs, func(f *fakeNode) bool { return counter(f) < int64(first.Token) }) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	var had []*fakeNode // the nodes with the token as their counter
	for i, f := range fs {
		if n := counter(f); n == int64(first.Token) {
			had = append(had, f)
		} else {
			t.Errorf("node %d's counter is %d after the acquisition of token %d, want the token on every node", i, n, first.Token)
		}
	}
	if len(had) < 3 {
		t.Fatalf("%d nodes have the token: fewer than a quorum", len(had))
	}
	if err := r.Release(t.Context(), "k", "v1"); err != nil {
		t.Fatal(err)
	}
	// Two nodes with the token restart empty, and a third hangs: the
	// next quorum has two nodes that lost it, and two others.
	for _, f := range had[:2] {
		f.mu.Lock()
		clear(f.keys)
		clear(f.expires)
		f.mu.Unlock()
	}
	had[2].setHang(true)
	defer had[2].setHang(false)
	second, err := r.Acquire(t.Context(), "k", "v2", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if second.Token <= first.Token {
		t.Errorf("token %d after token %d: the token went back after two nodes restarted empty", second.Token, first.Token)
	}
}
