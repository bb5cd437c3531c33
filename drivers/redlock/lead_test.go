package redlock

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/distlock/lock/driver"
)

// keyLedBy returns a key whose woken acquisitions ask node i of r first.
func keyLedBy(t *testing.T, r *Redlock, i int) string {
	t.Helper()
	for n := range 1000 {
		if k := fmt.Sprint("k", n); r.lead(r.lockKey(k)) == i {
			return k
		}
	}
	t.Fatalf("no key among 1000 is led by node %d", i)
	return ""
}

// askedCount returns how many commands f has received.
func (f *fakeNode) askedCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked
}

// wokenAttempt watches key (until the test ends) and has an announcement
// wake the watcher: the next Acquire of key is one that follows a release.
func wokenAttempt(t *testing.T, r *Redlock, key string) {
	t.Helper()
	w, err := r.Watch(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	r.subs.announce(r.channel(key), "previous")
	if !released(w, time.Second) {
		t.Fatal("the announcement did not wake the watcher")
	}
}

// TestAcquire_wokenAsksTheLeadFirst: an attempt that follows a release
// asks the key's lead node alone first. Held there by a rival, it is
// refused without a request to any other node (rivals woken by the same
// release do not split the votes); granted there, it goes on to the
// others and takes the quorum; an attempt that follows no release asks
// every node at once.
func TestAcquire_wokenAsksTheLeadFirst(t *testing.T) {
	r, fs := fakes(t, 5)
	key := keyLedBy(t, r, 2)
	lk := r.lockKey(key)
	wokenAttempt(t, r, key)
	fs[2].hold(lk, "rival", time.Minute)
	before := make([]int, len(fs))
	for i, f := range fs {
		before[i] = f.askedCount()
	}
	if _, err := r.Acquire(t.Context(), key, "mine", time.Minute); !errors.Is(err, driver.ErrHeld) {
		t.Fatalf("woken Acquire with the lead held by a rival: %v, want ErrHeld", err)
	}
	for i, f := range fs {
		if got := f.askedCount() - before[i]; i != 2 && got != 0 {
			t.Errorf("node %d was asked %d times: a woken attempt the lead refused went on to it", i, got)
		}
	}

	// No release since: the next attempt asks every node, and wins on the
	// four the rival does not hold.
	if _, err := r.Acquire(t.Context(), key, "mine", time.Minute); err != nil {
		t.Fatalf("Acquire after no release, with only the lead held: %v", err)
	}
	if err := r.Release(t.Context(), key, "mine"); err != nil {
		t.Fatal(err)
	}

	// Woken again, with the lead free: granted through it.
	fs[2].mu.Lock()
	delete(fs[2].keys, lk)
	fs[2].mu.Unlock()
	r.subs.announce(r.channel(key), "another")
	if _, err := r.Acquire(t.Context(), key, "mine2", time.Minute); err != nil {
		t.Fatalf("woken Acquire with every node free: %v", err)
	}
	held := 0
	for i, f := range fs {
		f.mu.Lock()
		v := f.keys[lk]
		f.mu.Unlock()
		switch {
		case v == "mine2":
			held++
		case i == 2:
			t.Errorf("the lead holds %q, want the lock", v)
		}
	}
	if held < 3 {
		t.Errorf("the lock is on %d of 5 nodes, want a quorum", held)
	}
}

// TestAcquire_wokenGoesOnWithoutALeadThatFails: a woken attempt whose lead
// fails or seems hung still wins on a quorum of the others.
func TestAcquire_wokenGoesOnWithoutALeadThatFails(t *testing.T) {
	for _, tc := range []struct {
		name      string
		breakLead func(r *Redlock, f *fakeNode)
	}{
		{"lead times out", func(_ *Redlock, f *fakeNode) { f.setHang(true) }},
		{"lead timed out before", func(r *Redlock, _ *fakeNode) { r.breakers[1].timeouts.Store(1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, fs := fakes(t, 3)
			key := keyLedBy(t, r, 1)
			wokenAttempt(t, r, key)
			tc.breakLead(r, fs[1])
			if _, err := r.Acquire(t.Context(), key, "mine", time.Minute); err != nil {
				t.Fatalf("woken Acquire, lead broken: %v", err)
			}
		})
	}
}

// TestLead_agreesAcrossNodeOrders: clients that list the same nodes in
// another order ask the same lead first, and keys spread over the nodes.
func TestLead_agreesAcrossNodeOrders(t *testing.T) {
	names := []string{"a:1", "b:2", "c:3", "d:4", "e:5"}
	nodes := func(order []int) []Node {
		ns := make([]Node, len(order))
		for i, j := range order {
			ns[i] = newFake(names[j])
		}
		return ns
	}
	r1, err := New(nodes([]int{0, 1, 2, 3, 4}))
	if err != nil {
		t.Fatal(err)
	}
	r2, err := New(nodes([]int{3, 0, 4, 2, 1}))
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close()
	defer r2.Close()
	per := make([]int, len(names))
	for n := range 1000 {
		lk := r1.lockKey(fmt.Sprint("key-", n))
		a, b := r1.nodes[r1.lead(lk)].String(), r2.nodes[r2.lead(lk)].String()
		if a != b {
			t.Fatalf("%s: lead %s in one order, %s in another", lk, a, b)
		}
		per[r1.lead(lk)]++
	}
	for i, n := range per {
		if n < 100 {
			t.Errorf("node %d leads %d of 1000 keys: the leads do not spread (%v)", i, n, per)
		}
	}
}
