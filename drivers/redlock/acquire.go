package redlock

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distlock/lock/driver"
)

// Acquire makes one attempt to take key on a quorum of nodes.
func (r *Redlock) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	lk := r.lockKey(key)
	a := &acquireRound{lk: lk, value: value, prior: r.attempts.beingUndone(lk)}
	a.leftovers = r.leftovers.take(lk)
	ms := millis(ttl) // rounded up: a lease a little longer than asked is safe
	if r.cfg.fencing {
		a.call = fencedAcquireScript.call([]string{lk, r.fenceKey(lk)}, value, ms)
	} else {
		a.call = []any{"SET", lk, value, "PX", ms, "NX"}
	}
	ch, heard, from, fresh, watched := r.subs.announcements(key)
	first, alone := r.firstNode(lk, from, fresh, watched)
	a.start(ctx, r, ttl, first, alone)
	var lease driver.Lease
	var err error
	switch a.decide() {
	case granted:
		if r.cfg.fencing {
			lease, err = r.fence(ctx, a)
		}
	case refused:
		err = driver.ErrHeld
		if watched {
			r.subs.rewake(ch, heard, fresh, a.judgeAfter)
		}
	default:
		err = a.err("acquire")
	}
	if err == nil {
		r.attempts.track(a)
		if a.dropped != 0 {
			r.sparse.add(value, a.dropped, ttl)
		}
	} else {
		r.attempts.trackUndo(a)
	}
	a.finish(err != nil)
	return lease, err
}

// firstNode returns the node that an attempt on lk asks alone first, if
// any. from is the node that sent the key's latest announcement, fresh
// tells whether it came since the client's last attempt, and watched
// whether the key has waiters.
func (r *Redlock) firstNode(lk string, from int, fresh, watched bool) (int, bool) {
	switch {
	case len(r.nodes) == 1:
	case fresh && r.healthy(from) && !r.degraded():
		// Woken by a release, the client's rivals likely were too. Asked
		// at once, the nodes would split their votes among them, often so
		// that none wins. The node that announced the release first has
		// released the key, and the rivals heard it too. The one it
		// grants goes on to the others, and the rest stop there.
		return from, true
	case fresh || watched || r.degraded():
		// A retry of a call that found the key held, or any attempt while
		// a node is failing, goes through the key's first healthy node by
		// rendezvous hashing (its lead, if healthy). With a node down, a
		// quorum needs nearly every node left, and a rival that takes one
		// of them spoils the round (with 2 of 5 nodes hung and 8
		// contenders, handoffs fell from about 200/s to 2/s). The
		// announcer is no guide then. With the lead hung, every node that
		// releases announces, and rivals hear different ones first.
		return r.healthyLead(lk)
	}
	return 0, false
}

// acquireRound is the round of one attempt to take a key: a SET NX on
// every node, or with fencing a script that also reads the key's counter.
// A failed attempt is undone on each node that may have set the key, by
// the node's worker, once the node's own request has ended.
type acquireRound struct {
	round
	lk, value string
	call      []any           // the SET NX, or fencedAcquireScript's call
	prior     *acquireRound   // this client's last failed attempt on lk, if still being undone
	leftovers []leftover      // this client's released values of lk that nodes may still hold
	short     bool            // the node asked alone first refused: no other was asked
	decided   chan struct{}   // closed by finish
	failing   atomic.Bool     // the attempt failed; set before decided closes
	undone    []chan struct{} // for a failure: closed, by node, once the node's undo is done (or needed none)
}

// start asks the nodes, node first alone if alone. A refusal there ends
// the round with nothing taken anywhere. Any other answer from it, or
// none, is tallied with the others' (its undo, if the round fails, is its
// worker's).
func (a *acquireRound) start(ctx context.Context, r *Redlock, ttl time.Duration, first int, alone bool) {
	a.begin(ctx, r, a, ttl)
	if alone {
		if rep := a.askAlone(first); rep.err == nil && !rep.yes {
			a.short = true
			a.cancel()
			return
		}
	}
	if a.n == 1 {
		a.fanOut()
		return
	}
	a.decided = make(chan struct{})
	a.allEnded = make(chan struct{}) // for the release that follows a grant
	if !r.cfg.quorumFirst {
		a.fanOut()
		return
	}
	// Nodes that may still hold this client's released values of the key
	// are asked at once: the request takes the key from them (see
	// leftovers), which a node held back and never asked would keep until
	// the values expire.
	var also uint64
	for _, l := range a.leftovers {
		for i := range a.n {
			if l.on(i) {
				also |= 1 << i
			}
		}
	}
	a.fanOutQuorum(a.lk, first, alone, also)
}

// ask asks for the SET NX, after the undoing of this client's last failed
// attempt on the node, if any. If the node may still hold values of the
// key that this client released, it asks for retakeScript instead, which
// takes the key from them (with fencing: it deletes them first).
func (a *acquireRound) ask(ctx context.Context, i int, n Node) (bool, int64, error) {
	var late string // the last failed attempt's value, if its SET here may land late
	if a.prior != nil {
		// Once undone there, its reply from the node is in.
		if a.prior.waitUndone(ctx, i) && a.prior.results[i].mayLandLate() {
			late = a.prior.value
		}
	}
	if a.r.cfg.fencing {
		for _, l := range a.leftovers {
			l.clear(ctx, i, n, a.lk)
		}
		if late != "" {
			run(ctx, n, undoScript, undoScript.call([]string{a.lk}, late)) //nolint:errcheck // best effort, as clear
		}
		v, err := run(ctx, n, fencedAcquireScript, a.call)
		return err == nil && v >= 0, v, err
	}
	if call := a.retake(i, late); call != nil {
		v, err := run(ctx, n, retakeScript, call)
		return err == nil && v == 1, 0, err
	}
	ok, err := setNX(ctx, n, a.call)
	return ok, 0, err
}

// setNX sends call, a SET ... NX, to n, and reports whether it set the
// key: false, with no error, if the key existed.
func setNX(ctx context.Context, n Node, call []any) (bool, error) {
	reply, err := n.Do(ctx, call)
	switch {
	case err != nil:
		return false, err
	case reply == nil:
		return false, nil // NX: the key exists
	case reply != "OK":
		return false, fmt.Errorf("SET replied %v: %w", reply, errNoReply)
	}
	return true, nil
}

// retake returns the call of retakeScript for node i if the node may hold
// dead values of the key (late, if not empty, and this client's
// leftovers), or nil.
func (a *acquireRound) retake(i int, late string) []any {
	var call []any
	add := func(v string) {
		if call == nil {
			call = retakeScript.call([]string{a.lk}, a.value, a.call[4])
		}
		call = append(call, v)
	}
	if late != "" {
		add(late)
	}
	for _, l := range a.leftovers {
		if l.on(i) {
			add(l.value)
		}
	}
	return call
}

// decide tallies the replies.
func (a *acquireRound) decide() verdict {
	if a.short {
		a.got, a.no = 1, 1
		return refused
	}
	return a.tally()
}

// finish tells the node workers whether the attempt failed. A failure
// with one node is undone in the background: the node's request has
// ended, so the undo cannot overtake it, and the caller need not wait.
func (a *acquireRound) finish(failure bool) {
	switch {
	case a.short: // nothing was taken
	case a.sync:
		a.keepLeftovers(0, a.results[0], failure)
		if failure && a.results[0].mayHaveTakenEffect() {
			go a.undoOn(0)
		}
	case a.decided != nil:
		a.failing.Store(failure)
		if a.undone != nil {
			// The nodes never asked have nothing to undo.
			for m := a.dropped; m != 0; m &= m - 1 {
				close(a.undone[bits.TrailingZeros64(m)])
			}
		}
		close(a.decided)
	}
}

// unsent does nothing: a request not sent needs no undo.
func (a *acquireRound) unsent(int) {}

// afterReply waits for the verdict, and undoes a failed attempt on node i
// if the request may have taken effect there.
func (a *acquireRound) afterReply(i int, rep reply) {
	<-a.decided
	failing := a.failing.Load()
	a.keepLeftovers(i, rep, failing)
	if failing && rep.mayHaveTakenEffect() {
		a.undoOn(i)
	}
	if a.undone != nil {
		close(a.undone[i])
	}
}

// keepLeftovers remembers what node i may hold once its request, which
// ended with rep, got no answer: the dead values that the attempt was to
// take from the node (see leftovers), which it may not have, and, if the
// attempt failed, its own value, whose SET may land after the undo.
// Before a failed attempt's undo, so that the client's next attempts
// find it.
func (a *acquireRound) keepLeftovers(i int, rep reply, failing bool) {
	if !rep.mayLandLate() {
		return
	}
	for _, l := range a.leftovers {
		if l.on(i) {
			a.r.leftovers.remember(a.lk, l.value, 1<<i, nil, !l.late.IsZero())
		}
	}
	if failing {
		a.r.leftovers.addLate(a.lk, a.value, 1<<i)
	}
}

// afterAll forgets the attempt: no release or retry need wait for it.
// If it was granted, and its SETs on some nodes got no answer, it first
// leaves those nodes for its release to remember (see releaseRound and
// leftovers): the SETs may land there after it. A release that comes
// while the attempt is still tracked finds them by the attempt itself;
// one that comes after finds them here, since they are left before the
// attempt is forgotten. (In the other order, a release in between found
// neither: make test, under load.)
func (a *acquireRound) afterAll() {
	if a.decided != nil && !a.failing.Load() {
		var late uint64
		for i := range a.n {
			if a.results[i].mayLandLate() {
				late |= 1 << i
			}
		}
		if late != 0 {
			a.r.lateSets.add(a.value, late, a.ttl)
		}
	}
	a.r.attempts.untrack(a)
}

// undoOn deletes the attempt's key on node i, without announcing it (see
// "Wake-ups" in DESIGN.md). It runs under a timeout of its own, not under
// the caller's context, which may be cancelled. It is best effort: if it
// fails, the key expires by its TTL.
func (a *acquireRound) undoOn(i int) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(a.nctx), max(cleanupTimeout, a.r.roundTimeout(0)))
	defer cancel()
	run(ctx, a.r.nodes[i], undoScript, undoScript.call([]string{a.lk}, a.value)) //nolint:errcheck
}

// waitUndone waits until the failed attempt is undone on node i (or
// needed no undoing there), and reports true, or until ctx is done, and
// reports false.
func (a *acquireRound) waitUndone(ctx context.Context, i int) bool {
	select {
	case <-a.undone[i]:
		return true
	case <-ctx.Done():
		return false
	}
}

// fenceRound writes an acquisition's fencing token on every node that
// the acquisition asked, and counts a yes where it holds the lock.
// (Written only on the nodes that granted it, a token survived on as few
// as a quorum's nodes, and two of those restarting empty at N=5 let a
// later quorum draw it again: see "Restarts and persistence" in
// DESIGN.md.) The nodes that a quorum-first acquisition never asked are
// not asked here either: asking fewer nodes is that mode's point, and its
// locks already rest on a bare quorum.
type fenceRound struct {
	noHooks
	round
	call []any // fenceScript's
}

// ask raises the counter on node n, and says yes if the acquisition holds
// the lock there.
func (f *fenceRound) ask(ctx context.Context, _ int, n Node) (bool, int64, error) {
	v, err := run(ctx, n, fenceScript, f.call)
	return err == nil && v == 1, v, err
}

// fence raises the key's counter to max+1 on the nodes acq asked, and
// returns the token if a quorum holds the lock with it.
func (r *Redlock) fence(ctx context.Context, acq *acquireRound) (driver.Lease, error) {
	t := acq.max + 1
	f := &fenceRound{call: fenceScript.call([]string{acq.lk, r.fenceKey(acq.lk)}, acq.value, t)}
	f.begin(ctx, r, f, 0)
	f.fanOutExcept(acq.dropped) // the nodes acq never asked never saw the value: a no at once
	switch f.tally() {
	case granted:
		return driver.Lease{Token: uint64(t), Fenced: true}, nil
	case refused:
		return driver.Lease{}, errors.New("redlock: the lock was lost on a quorum of nodes before its fencing token was written")
	}
	return driver.Lease{}, f.err("fence")
}

// attempts are this client's acquisitions whose requests are still out.
// A granted one's release waits for its SETs, node by node, and a failed
// one's next attempt waits for its undoing. It is safe for concurrent use.
type attempts struct {
	mu         sync.Mutex
	straggling map[string]*acquireRound // granted with requests still out, by value
	undoing    map[string]*acquireRound // failed and not yet undone on every node, by lock key
	nundoing   atomic.Int32             // len(undoing), read without mu
	filling    map[string]*fillRound    // extensions that took nodes, with SETs still out, by value
}

func newAttempts() attempts {
	return attempts{straggling: make(map[string]*acquireRound), undoing: make(map[string]*acquireRound), filling: make(map[string]*fillRound)}
}

// trackFill remembers an extension's fill whose SETs to some nodes are
// still out, so that a release of its value waits for them (a SET that
// landed after the release would hold the key there until its TTL). Its
// last request to end forgets it (see untrackFill).
func (as *attempts) trackFill(f *fillRound) {
	as.mu.Lock()
	defer as.mu.Unlock()
	if f.running.Load() > 0 {
		as.filling[f.value] = f
	}
}

// untrackFill forgets f, whose requests have all ended.
func (as *attempts) untrackFill(f *fillRound) {
	as.mu.Lock()
	defer as.mu.Unlock()
	if as.filling[f.value] == f {
		delete(as.filling, f.value)
	}
}

// filler returns the extension's fill of value if some of its SETs are
// still out.
func (as *attempts) filler(value string) *fillRound {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.filling[value]
}

// track remembers a granted acquisition whose requests to some nodes are
// still out. Its last request to end forgets it (see untrack).
func (as *attempts) track(a *acquireRound) {
	if a.sync {
		return
	}
	as.mu.Lock()
	defer as.mu.Unlock()
	if a.running.Load() > 0 {
		as.straggling[a.value] = a
	}
}

// trackUndo remembers a failed acquisition until it is undone on every
// node. The next attempt on its key then asks a node only once the
// failed one is undone there. Sent at once, the request could reach the
// node first, and find the key held by our own failed attempt. (A retry
// woken by a release comes right after a failure.) The undone channels
// are made here, before the attempt can be found, and before finish lets
// its workers close them.
func (as *attempts) trackUndo(a *acquireRound) {
	if a.sync || a.short {
		return // one node, or refused by the first alone: nothing to spoil or undo
	}
	a.undone = make([]chan struct{}, a.n)
	for i := range a.undone {
		a.undone[i] = make(chan struct{})
	}
	as.mu.Lock()
	defer as.mu.Unlock()
	if _, ok := as.undoing[a.lk]; !ok {
		as.nundoing.Add(1)
	}
	as.undoing[a.lk] = a
}

// untrack forgets a, whose requests have all ended.
func (as *attempts) untrack(a *acquireRound) {
	as.mu.Lock()
	defer as.mu.Unlock()
	if as.straggling[a.value] == a {
		delete(as.straggling, a.value)
	}
	if as.undoing[a.lk] == a {
		delete(as.undoing, a.lk)
		as.nundoing.Add(-1)
	}
}

// beingUndone returns the last failed acquisition of lk if it is not yet
// undone on every node. It is cheap when none is.
func (as *attempts) beingUndone(lk string) *acquireRound {
	if as.nundoing.Load() == 0 {
		return nil
	}
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.undoing[lk]
}

// straggler returns the acquisition of value if some of its requests are
// still out.
func (as *attempts) straggler(value string) *acquireRound {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.straggling[value]
}
