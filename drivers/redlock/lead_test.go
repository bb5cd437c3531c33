package redlock

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/distlock/lock/driver"
)

// keyLedBy returns a key whose releases node i of r announces.
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
// from node from wake the watcher: the next Acquire of key is one that
// follows a release.
func wokenAttempt(t *testing.T, r *Redlock, key string, from int) {
	t.Helper()
	w, err := r.Watch(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	r.subs.announce(from, r.channel(key), "previous")
	if !released(w, time.Second) {
		t.Fatal("the announcement did not wake the watcher")
	}
}

// TestAcquire_wokenAsksTheAnnouncerFirst: an attempt that follows a
// release asks the node that announced it alone first. Held there by a
// rival, it is refused without a request to any other node (rivals woken
// by the same release do not split the votes); granted there, it goes on
// to the others and takes the quorum; an attempt that follows no release
// asks every node at once.
func TestAcquire_wokenAsksTheAnnouncerFirst(t *testing.T) {
	r, fs := fakes(t, 5)
	key := keyLedBy(t, r, 0) // not the announcer below: the attempt follows the announcement, not the hash
	lk := r.lockKey(key)
	wokenAttempt(t, r, key, 2)
	fs[2].hold(lk, "rival", time.Minute)
	before := make([]int, len(fs))
	for i, f := range fs {
		before[i] = f.askedCount()
	}
	if _, err := r.Acquire(t.Context(), key, "mine", time.Minute); !errors.Is(err, driver.ErrHeld) {
		t.Fatalf("woken Acquire with the announcer held by a rival: %v, want ErrHeld", err)
	}
	for i, f := range fs {
		if got := f.askedCount() - before[i]; i != 2 && got != 0 {
			t.Errorf("node %d was asked %d times: a woken attempt the announcer refused went on to it", i, got)
		}
	}

	// No release since: the next attempt asks every node, and wins on the
	// four the rival does not hold.
	if _, err := r.Acquire(t.Context(), key, "mine", time.Minute); err != nil {
		t.Fatalf("Acquire after no release, with only the announcer held: %v", err)
	}
	if err := r.Release(t.Context(), key, "mine"); err != nil {
		t.Fatal(err)
	}

	// Woken again, with the lead free: granted through it.
	fs[2].mu.Lock()
	delete(fs[2].keys, lk)
	fs[2].mu.Unlock()
	r.subs.announce(2, r.channel(key), "another")
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
			t.Errorf("the announcer holds %q, want the lock", v)
		}
	}
	if held < 3 {
		t.Errorf("the lock is on %d of 5 nodes, want a quorum", held)
	}
}

// TestAcquire_wokenGoesOnWithoutALeadThatFails: a woken attempt whose
// announcer fails or seems hung still wins on a quorum of the others.
func TestAcquire_wokenGoesOnWithoutALeadThatFails(t *testing.T) {
	for _, tc := range []struct {
		name      string
		breakLead func(r *Redlock, f *fakeNode)
	}{
		{"lead times out", func(_ *Redlock, f *fakeNode) { f.setHang(true) }},
		{"lead timed out before", func(r *Redlock, _ *fakeNode) { r.health[1].timeouts.Store(1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, fs := fakes(t, 3)
			const key = "k"
			wokenAttempt(t, r, key, 1)
			tc.breakLead(r, fs[1])
			if _, err := r.Acquire(t.Context(), key, "mine", time.Minute); err != nil {
				t.Fatalf("woken Acquire, lead broken: %v", err)
			}
		})
	}
}

// TestAcquire_hungAnnouncerIsAskedAloneOnce: a woken attempt whose
// announcer hangs waits for it alone (until the round's limit), then wins
// on the others; and, the others having answered, the announcer is not
// healthy, so the next woken attempt does not ask it alone again. Its
// silence, alone, could not be told from the client's own stall, and so
// never counted: every woken attempt waited for it again, for the round's
// whole limit.
func TestAcquire_hungAnnouncerIsAskedAloneOnce(t *testing.T) {
	const nodeTimeout = 200 * time.Millisecond // fakes'
	r, fs := fakes(t, 5)
	key := keyLedBy(t, r, 1)
	wokenAttempt(t, r, key, 1)
	fs[1].setHang(true)
	if _, err := r.Acquire(t.Context(), key, "mine", time.Minute); err != nil {
		t.Fatalf("woken Acquire, its announcer hung: %v", err)
	}
	if r.healthy(1) {
		t.Error("the hung announcer is still healthy after the other nodes answered")
	}
	if err := r.Release(t.Context(), key, "mine"); err != nil {
		t.Fatal(err)
	}
	r.subs.announce(1, r.channel(key), "mine")
	start := time.Now()
	if _, err := r.Acquire(t.Context(), key, "again", time.Minute); err != nil {
		t.Fatalf("second woken Acquire, its announcer hung: %v", err)
	}
	if took := time.Since(start); took > nodeTimeout {
		t.Errorf("second woken Acquire took %v: it asked the hung announcer alone again", took)
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

// announcedBy returns how many announcements each of fs has made.
func announcedBy(fs []*fakeNode) []int {
	n := make([]int, len(fs))
	for i, f := range fs {
		f.mu.Lock()
		n[i] = f.published
		f.mu.Unlock()
	}
	return n
}

// TestRelease_announcesOnce: a release is announced by the key's lead
// alone, and wakes a waiter of another client; if the lead timed out
// lately, by every node that releases the key; if the lead does not
// release it (it failed, or never held the key), by the nodes that do,
// once the release's requests have ended.
func TestRelease_announcesOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(r *Redlock, fs []*fakeNode, lk string) // before the release
		want  []int                                       // announcements by node; node 2 leads the key
	}{
		{"lead healthy", func(*Redlock, []*fakeNode, string) {}, []int{0, 0, 1, 0, 0}},
		{"lead timed out lately", func(r *Redlock, _ []*fakeNode, _ string) { r.health[2].timeouts.Store(1) }, []int{1, 1, 1, 1, 1}},
		{"lead lost the key", func(_ *Redlock, fs []*fakeNode, lk string) {
			fs[2].mu.Lock()
			delete(fs[2].keys, lk)
			fs[2].mu.Unlock()
		}, []int{1, 1, 0, 1, 1}},
		{"lead hangs", func(_ *Redlock, fs []*fakeNode, _ string) { fs[2].setHang(true) }, []int{1, 1, 0, 1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, fs := fakes(t, 5)
			waiter, _ := fakesOn(t, fs)
			key := keyLedBy(t, r, 2)
			if _, err := r.Acquire(t.Context(), key, "mine", time.Minute); err != nil {
				t.Fatal(err)
			}
			w, err := waiter.Watch(t.Context(), key)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			tc.setup(r, fs, r.lockKey(key))
			if err := r.Release(t.Context(), key, "mine"); err != nil {
				t.Fatal(err)
			}
			if !released(w, 5*time.Second) {
				t.Fatal("the release did not wake the other client's waiter")
			}
			// The fallback's announcements come after the round's last
			// request has ended: wait for them.
			want := 0
			for _, n := range tc.want {
				want += n
			}
			deadline := time.Now().Add(5 * time.Second)
			got := announcedBy(fs)
			for sum(got) < want && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
				got = announcedBy(fs)
			}
			time.Sleep(20 * time.Millisecond) // and for any announcement too many
			if got = announcedBy(fs); !slices.Equal(got, tc.want) {
				t.Errorf("announcements by node: %v, want %v", got, tc.want)
			}
		})
	}
}

func sum(xs []int) (n int) {
	for _, x := range xs {
		n += x
	}
	return n
}

// TestWatch_waitsForEveryConnectedNode: a Watch returns once every node
// whose connection is up confirmed the subscription (the one that will
// announce the next release may be any), or, when one is slower than the
// Watch's timer, once a quorum did.
func TestWatch_waitsForEveryConnectedNode(t *testing.T) {
	r, fs := fakes(t, 3) // node timeout 200ms: the Watch's timer
	// Connect, so that the next Watch finds the connections up.
	w0, err := r.Watch(t.Context(), "warm-up")
	if err != nil {
		t.Fatal(err)
	}
	defer w0.Close()
	for _, f := range fs {
		for deadline := time.Now().Add(10 * time.Second); !f.subscribed(r.channel("warm-up")); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s not subscribed within 10s", f.name)
			}
		}
	}

	fs[2].mu.Lock()
	fs[2].confirmDelay = 50 * time.Millisecond
	fs[2].mu.Unlock()
	w, err := r.Watch(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if !fs[2].subscribed(r.channel("k")) {
		t.Error("the Watch returned before the slow node confirmed its subscription")
	}

	fs[2].mu.Lock()
	fs[2].confirmDelay = 2 * time.Second
	fs[2].mu.Unlock()
	start := time.Now()
	w2, err := r.Watch(t.Context(), "k2")
	if err != nil {
		t.Fatalf("Watch with a quorum confirmed and one node slow: %v", err)
	}
	defer w2.Close()
	if took := time.Since(start); took > time.Second {
		t.Errorf("the Watch took %v: it waited for the slow node past its timer", took)
	}
}

// TestWatch_waitsForNodesStillDialing: a client's first Watch waits for
// the nodes whose publish/subscribe connection is still being dialed, as
// for those already connected. A node that dials slower than a quorum
// would otherwise confirm after the Watch returned, and a release it
// announced meanwhile would wake nobody: the rueidis driver's nodes dial a
// connection in Subscribe, and its waiter at N=5 slept until its poll.
func TestWatch_waitsForNodesStillDialing(t *testing.T) {
	r, fs := fakes(t, 5) // node timeout 200ms: the Watch's timer
	for _, f := range fs[3:] {
		f.mu.Lock()
		f.dialDelay = 50 * time.Millisecond
		f.mu.Unlock()
	}
	w, err := r.Watch(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i, f := range fs {
		if !f.subscribed(r.channel("k")) {
			t.Errorf("the first Watch returned before node %d, still dialing, confirmed its subscription", i)
		}
	}
}

// TestWatch_lateConfirmationWakes: a node that confirms its subscription
// after the Watch gave up waiting for it (its timer ran out with a quorum)
// wakes the watcher, since a release it announced before that went
// unheard.
func TestWatch_lateConfirmationWakes(t *testing.T) {
	r, fs := fakes(t, 3) // node timeout 200ms: the Watch's timer
	fs[2].mu.Lock()
	fs[2].confirmDelay = 400 * time.Millisecond
	fs[2].mu.Unlock()
	w, err := r.Watch(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if fs[2].subscribed(r.channel("k")) {
		t.Fatal("the slow node confirmed before the Watch's timer")
	}
	select {
	case <-w.Released():
		t.Fatal("woken before any release or confirmation")
	default:
	}
	select {
	case <-w.Released():
	case <-time.After(5 * time.Second):
		t.Fatal("the slow node's late confirmation did not wake the watcher")
	}
	if !fs[2].subscribed(r.channel("k")) {
		t.Error("woken before the slow node confirmed")
	}
}

// TestWatch_deadNodeDelaysNobody: a node that cannot be reached is not
// waited for, not even by the first Watch, which counted it as dialing,
// and its connection is retried with a backoff, not at once over and over.
func TestWatch_deadNodeDelaysNobody(t *testing.T) {
	for _, tc := range []struct {
		name string
		dead func(f *fakeNode)
	}{
		{"refusedInSubscribe", func(f *fakeNode) { f.dialErr = errors.New("connection refused") }},
		{"connectionEndsAtOnce", func(f *fakeNode) { f.connDies = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, fs := fakes(t, 5) // node timeout 200ms: the Watch's timer
			fs[4].mu.Lock()
			tc.dead(fs[4])
			fs[4].mu.Unlock()
			start := time.Now()
			for i := range 3 {
				begun := time.Now()
				w, err := r.Watch(t.Context(), fmt.Sprint("k", i))
				if err != nil {
					t.Fatal(err)
				}
				took := time.Since(begun)
				w.Close()
				if took > 100*time.Millisecond {
					t.Fatalf("Watch %d took %v with a node that cannot be reached; want it not to wait for that node", i, took)
				}
			}
			time.Sleep(300 * time.Millisecond)
			fs[4].mu.Lock()
			dials := fs[4].dials
			fs[4].mu.Unlock()
			// 50ms, 100ms, 200ms: a handful of tries in 300ms.
			if limit := 8; dials > limit {
				t.Errorf("%d connections to the dead node in %v; want at most %d (a backoff)", dials, time.Since(start).Round(time.Millisecond), limit)
			}
		})
	}
}

// TestWatch_nodeReachedLaterWakes: a node that could not be reached when
// the Watch returned wakes the watcher once it is reached and confirms the
// subscription: a release it announced meanwhile went unheard.
func TestWatch_nodeReachedLaterWakes(t *testing.T) {
	r, fs := fakes(t, 3)
	fs[2].mu.Lock()
	fs[2].dialErr = errors.New("connection refused")
	fs[2].mu.Unlock()
	w, err := r.Watch(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	select {
	case <-w.Released():
		t.Fatal("woken before the node was reached")
	case <-time.After(100 * time.Millisecond):
	}
	fs[2].mu.Lock()
	fs[2].dialErr = nil
	fs[2].mu.Unlock()
	select {
	case <-w.Released():
	case <-time.After(5 * time.Second):
		t.Fatal("the node's confirmation, once reached, did not wake the watcher")
	}
	if !fs[2].subscribed(r.channel("k")) {
		t.Error("woken before the node confirmed")
	}
}

// TestWatch_hungNodeDelaysNobody: with a node hung, subscribing and
// unsubscribing go on at the healthy nodes' pace. The hung node's
// requests wait on its own writer, never on the waiter.
func TestWatch_hungNodeDelaysNobody(t *testing.T) {
	r, fs := fakes(t, 5) // node timeout 200ms: the Watch's timer
	w0, err := r.Watch(t.Context(), "warm-up")
	if err != nil {
		t.Fatal(err)
	}
	defer w0.Close()
	fs[0].setHang(true)
	defer fs[0].setHang(false)
	// A round that times out on the hung node lets the client know. On a
	// loaded machine the hung node's request may start after the others
	// have answered; its timeout then counts as the client's stall, not
	// the node's (see Redlock.othersAnswered), and another round is
	// needed. (Waiting on one round, the test once spun until go test's
	// timeout.)
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; r.healthy(0); i++ {
		if time.Now().After(deadline) {
			t.Fatalf("node 0, hung, still healthy after %d rounds", i)
		}
		if _, err := r.Acquire(t.Context(), fmt.Sprint("seen", i), "v", time.Second); err != nil {
			t.Fatal(err)
		}
		for end := time.Now().Add(time.Second); r.healthy(0) && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
	}
	for i := range 10 {
		start := time.Now()
		w, err := r.Watch(t.Context(), fmt.Sprint("k", i))
		if err != nil {
			t.Fatal(err)
		}
		subscribed := time.Since(start)
		start = time.Now()
		w.Close()
		closed := time.Since(start)
		// Waiting for the hung node would take its timeout, 200ms; a busy
		// machine can take 10ms for a Close that waits for nothing.
		if subscribed > 50*time.Millisecond || closed > 50*time.Millisecond {
			t.Fatalf("Watch took %v and Close %v with a node hung; want neither to wait for it", subscribed, closed)
		}
	}
}
