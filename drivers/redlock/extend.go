package redlock

import (
	"context"
	"errors"
	"math/bits"
	"time"

	"github.com/distlock/lock/driver"
)

// Extend resets the expiry of key to ttl on every node where value holds
// it, and succeeds if a quorum did. A key that expired is gone from its
// node, so an expired lease is never revived.
//
// A lock is often held on a bare quorum: its acquisition went on at a
// quorum's yes, and rivals held the other nodes for a moment. One node of
// that quorum that fails to answer in time (a slow one on a busy machine,
// or a hung one) would then fail every extension. So an extension that
// falls short for want of answers, while some nodes did extend it and
// others have no key at all, takes the key on those others as an
// acquisition would (SET NX): a second round, to those nodes only, that
// succeeds if the nodes extended and the nodes taken make a quorum. That
// is safe for the reason an acquisition is: a node takes the key only
// where nobody holds it, so while the lease holds on a quorum nobody else
// can. The core counts the extension only if it ends within the lease's
// validity, measured from before the first round.
//
// With quorum_first, the nodes that the lease's acquisition never asked
// are not asked either: they never saw the value. They count as nodes
// that have no key, a no for the first round and candidates for the
// second.
func (r *Redlock) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	lk := r.lockKey(key)
	e := &extendRound{call: extendScript.call([]string{lk}, value, millis(ttl))}
	e.begin(ctx, r, e, ttl)
	never := r.notAsked(value)
	for m := never; m != 0; m &= m - 1 {
		e.results[bits.TrailingZeros64(m)].val = -1 // absent: see absent
	}
	e.fanOutExcept(never)
	err := e.holderVerdict("extend")
	if err == nil || errors.Is(err, driver.ErrNotHeld) {
		return err
	}
	absent := e.absent()
	if e.yes == 0 || e.yes+bits.OnesCount64(absent) < e.quorum {
		return err
	}
	if r.cfg.quorumFirst {
		r.sparse.forget(value) // the fill may take the key on nodes its acquisition never asked
	}
	f := &fillRound{value: value, call: []any{"SET", lk, value, "PX", millis(ttl), "NX"}}
	f.begin(ctx, r, f, ttl)
	f.allEnded = make(chan struct{}) // for a release that comes while a SET is out
	f.fanOutTo(absent, e.yesSet)
	v := f.tally()
	r.attempts.trackFill(f)
	if v != granted {
		return err // the first round's error: it names the nodes that failed
	}
	return nil
}

// extendRound is the round of one Extend: compare-and-PEXPIRE on every
// node.
type extendRound struct {
	noHooks
	round
	call []any // extendScript's
}

// ask runs the extend script, and counts a reply of 1 as a yes. A reply
// of -1 (the key is absent) is a no, kept in val for absent.
func (e *extendRound) ask(ctx context.Context, _ int, n Node) (bool, int64, error) {
	v, err := run(ctx, n, extendScript, e.call)
	return err == nil && v == 1, v, err
}

// absent returns the nodes that answered the round, before its verdict,
// that they hold no value of the key. Only replies the tally took are
// read: a reply still out, or given up on, may still be written.
func (e *extendRound) absent() uint64 {
	var set uint64
	for i := range e.n {
		if e.tallied&^e.failedSet&(1<<i) != 0 && !e.results[i].yes && e.results[i].val < 0 {
			set |= 1 << i
		}
	}
	return set
}

// fillRound is an extension's second round: SET NX of the lease's value
// on the nodes where the first round found no key (see Redlock.Extend).
// The nodes that extended the lease count as yes without being asked;
// the others, as no.
type fillRound struct {
	round
	value string
	call  []any // the SET NX
}

// ask takes the key on node i if nobody holds it (somebody may have
// taken it since the first round).
func (f *fillRound) ask(ctx context.Context, _ int, n Node) (bool, int64, error) {
	ok, err := setNX(ctx, n, f.call)
	return ok, 0, err
}

func (*fillRound) unsent(int)            {}
func (*fillRound) afterReply(int, reply) {}

// afterAll forgets the round: no release need wait for its SETs.
func (f *fillRound) afterAll() { f.r.attempts.untrackFill(f) }
