package redlock

import (
	"math/bits"
	"slices"
	"testing"
	"time"
)

// askedSince returns how many commands each of fs received since before.
func askedSince(fs []*fakeNode, before []int) []int {
	n := make([]int, len(fs))
	for i, f := range fs {
		n[i] = f.askedCount()
		if before != nil {
			n[i] -= before[i]
		}
	}
	return n
}

// quorumOf returns the nodes that an acquisition of key on r asks first.
func quorumOf(t *testing.T, r *Redlock, key string) uint64 {
	t.Helper()
	m, ok := r.byRendezvous(r.lockKey(key), len(r.nodes)/2+1, 0)
	if !ok {
		t.Fatal("too few healthy nodes for a quorum")
	}
	return m
}

// TestAcquire_asksEveryNodeByDefault: without WithQuorumFirst, an
// acquisition asks every node, as the Redis document's algorithm does.
func TestAcquire_asksEveryNodeByDefault(t *testing.T) {
	r, fs := fakes(t, 5)
	if _, err := r.Acquire(t.Context(), "k", "v", time.Minute); err != nil {
		t.Fatal(err)
	}
	// The Acquire returned at a quorum: the other requests may still be
	// on their way.
	for deadline := time.Now().Add(time.Second); slices.Contains(askedSince(fs, nil), 0); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("requests by node: %v, want every node asked", askedSince(fs, nil))
		}
	}
}

// TestAcquire_asksAQuorumFirst: with WithQuorumFirst, an uncontended acquisition on healthy
// nodes asks a quorum of them, the key's first in rendezvous order, and
// its release asks the same nodes: the others never saw the value.
func TestAcquire_asksAQuorumFirst(t *testing.T) {
	for _, fencing := range []bool{false, true} {
		r, fs := fakes(t, 5, WithFencing(fencing), WithQuorumFirst(true))
		const key = "k"
		want := quorumOf(t, r, key)
		before := askedSince(fs, nil)
		if _, err := r.Acquire(t.Context(), key, "v", time.Minute); err != nil {
			t.Fatal(err)
		}
		if r.notAsked("v") == 0 {
			// On a machine too slow for the quorum to answer within the
			// hedge (2ms before the nodes' first answers), the others were
			// asked too: as designed, and nothing left to check here.
			t.Logf("fencing %t: the hedge fired, and every node was asked", fencing)
			continue
		}
		if err := r.Release(t.Context(), key, "v"); err != nil {
			t.Fatal(err)
		}
		for i, n := range askedSince(fs, before) {
			switch {
			case want&(1<<i) != 0 && n == 0:
				t.Errorf("fencing %t: node %d, of the key's quorum, was not asked", fencing, i)
			case want&(1<<i) == 0 && n != 0:
				t.Errorf("fencing %t: node %d, outside the key's quorum, got %d commands", fencing, i, n)
			}
		}
		for i, f := range fs { // the Release returned at its verdict
			for deadline := time.Now().Add(5 * time.Second); f.valueOn(r.lockKey(key)) != ""; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Errorf("fencing %t: node %d holds %q 5s after the release", fencing, i, f.valueOn(r.lockKey(key)))
					break
				}
			}
		}
	}
}

// TestAcquire_quorumFirstAsksTheOthersWhenOneRefuses: a node of the
// key's quorum held by a rival leaves the nodes asked short of a quorum,
// so the others are asked in the same round, and the lock is granted on
// a quorum of the rest.
func TestAcquire_quorumFirstAsksTheOthersWhenOneRefuses(t *testing.T) {
	r, fs := fakes(t, 5, WithQuorumFirst(true))
	const key = "k"
	lk := r.lockKey(key)
	q := quorumOf(t, r, key)
	rival := bits.TrailingZeros64(q)
	fs[rival].hold(lk, "rival", time.Minute)
	if _, err := r.Acquire(t.Context(), key, "v", time.Minute); err != nil {
		t.Fatalf("Acquire with one node of its quorum held by a rival: %v", err)
	}
	held := 0
	for i, f := range fs {
		if f.valueOn(lk) == "v" {
			held++
		} else if i != rival && q&(1<<i) != 0 {
			t.Errorf("node %d of the key's quorum, free, does not hold the lock", i)
		}
	}
	if held < 3 {
		t.Errorf("the lock is on %d of 5 nodes, want a quorum", held)
	}
}

// TestAcquire_hungNodeOfTheQuorumCostsAHedge: a node of the key's quorum
// that hangs delays the acquisition by about a round trip (the hedge),
// not by the node timeout: the nodes held back are asked, and decide.
func TestAcquire_hungNodeOfTheQuorumCostsAHedge(t *testing.T) {
	// A node timeout of 1s, so that the bound below tells the hedge from
	// the timeout even on a loaded machine.
	r, fs := fakes(t, 5, WithQuorumFirst(true), WithNodeTimeout(time.Second))
	const key = "k"
	q := quorumOf(t, r, key)
	fs[bits.TrailingZeros64(q)].setHang(true)
	start := time.Now()
	if _, err := r.Acquire(t.Context(), key, "v", time.Minute); err != nil {
		t.Fatalf("Acquire with a node of its quorum hung: %v", err)
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("Acquire took %v with a node of its quorum hung: it waited for the node timeout (1s)", took)
	}
}

// TestExtend_asksOnlyTheNodesItsAcquisitionAsked: with WithQuorumFirst,
// an extension of a lease whose acquisition asked a quorum asks the same
// nodes (the others never saw the value), and so does the release after
// it. By default, every node is asked.
func TestExtend_asksOnlyTheNodesItsAcquisitionAsked(t *testing.T) {
	for _, quorumFirst := range []bool{false, true} {
		r, fs := fakes(t, 5, WithQuorumFirst(quorumFirst))
		const key = "k"
		if _, err := r.Acquire(t.Context(), key, "v", time.Minute); err != nil {
			t.Fatal(err)
		}
		// The nodes the acquisition asked: a quorum, unless the machine
		// was so slow that the hedge fired and it asked the others too.
		want := uint64(1<<5-1) &^ r.notAsked("v")
		if quorumFirst && want == 1<<5-1 {
			t.Logf("the acquisition asked every node (its hedge fired): this run checks only that extensions and releases ask them")
		}
		// The acquisition's requests to the nodes outside its quorum may
		// still be on their way by default: wait for them.
		for deadline := time.Now().Add(time.Second); ; time.Sleep(time.Millisecond) {
			held := 0
			for _, f := range fs {
				if f.valueOn(r.lockKey(key)) == "v" {
					held++
				}
			}
			if held == bits.OnesCount64(want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("quorum_first %t: the value is on %d nodes, want %d", quorumFirst, held, bits.OnesCount64(want))
			}
		}
		before := askedSince(fs, nil)
		if err := r.Extend(t.Context(), key, "v", time.Minute); err != nil {
			t.Fatalf("quorum_first %t: Extend: %v", quorumFirst, err)
		}
		if err := r.Release(t.Context(), key, "v"); err != nil {
			t.Fatalf("quorum_first %t: Release: %v", quorumFirst, err)
		}
		// Extend and Release return at a quorum's verdict: wait for the
		// requests still out to the nodes that should get them.
		for deadline := time.Now().Add(time.Second); ; time.Sleep(time.Millisecond) {
			asked := askedSince(fs, before)
			done := true
			for i, n := range asked {
				if want&(1<<i) != 0 && n < 2 {
					done = false
				}
			}
			if done {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("quorum_first %t: commands by node %v, want 2 (extend, release) on each node of %05b", quorumFirst, asked, want)
			}
		}
		for i, n := range askedSince(fs, before) {
			if want&(1<<i) == 0 && n != 0 {
				t.Errorf("quorum_first %t: node %d, never asked by the acquisition, got %d commands", quorumFirst, i, n)
			}
		}
	}
}

// TestRelease_afterAFillAsksEveryNode: an extension that falls short
// takes the key on the nodes where it is absent (see Extend), which may
// be nodes the acquisition never asked; the release must then ask every
// node, or the value stays on those until it expires.
func TestRelease_afterAFillAsksEveryNode(t *testing.T) {
	r, fs := fakes(t, 5, WithQuorumFirst(true))
	const key = "k"
	lk := r.lockKey(key)
	q := quorumOf(t, r, key)
	if _, err := r.Acquire(t.Context(), key, "v", time.Minute); err != nil {
		t.Fatal(err)
	}
	// One node of the quorum hangs: the extension gets 2 yes, and takes
	// the key on the nodes where it is absent.
	slow := bits.TrailingZeros64(q)
	fs[slow].setHang(true)
	if err := r.Extend(t.Context(), key, "v", time.Minute); err != nil {
		t.Fatalf("Extend with one node of 3 hung: %v", err)
	}
	fs[slow].setHang(false)
	filled := 0
	for i, f := range fs {
		if q&(1<<i) == 0 && f.valueOn(lk) == "v" {
			filled++
		}
	}
	if filled == 0 {
		t.Fatal("the extension took the key on no node outside the acquisition's quorum: the test tests nothing")
	}
	if err := r.Release(t.Context(), key, "v"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Second); ; time.Sleep(time.Millisecond) {
		left := 0
		for _, f := range fs {
			if f.valueOn(lk) == "v" {
				left++
			}
		}
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d nodes still hold the value 1s after its release", left)
		}
	}
}
