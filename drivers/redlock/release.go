package redlock

import (
	"context"
	"slices"

	"github.com/distlock/lock/driver"
)

// Release deletes key on every node where value holds it, and announces
// the release on one node, the key's lead, for its waiters. Announced by
// every node, a release would wake every waiter of every client once per
// node, and the messages and the attempts they start crowd out the
// handoff on a small machine. The waiters' attempts ask the announcing
// node first, which has released the key. If the lead timed out lately,
// every node that releases the key announces it. If the lead did not
// release it (it failed, or never held the key), the nodes that did
// announce it once every request has ended.
func (r *Redlock) Release(ctx context.Context, key, value string) error {
	lk, ch := r.lockKey(key), r.channel(key)
	if failed := r.attempts.beingUndone(lk); failed != nil && failed.value == value {
		// A failed acquisition's own undo is under way on every node that
		// may hold it (each after its SET ended). The core's cleanup need
		// not wait for a second one, which on nodes that stopped answering
		// would cost a node timeout more.
		return driver.ErrNotHeld
	}
	rl := &releaseRound{call: releaseScript.call([]string{lk}, value, ch), prior: r.attempts.straggler(value), fill: r.attempts.filler(value), lk: lk, value: value}
	if len(r.nodes) > 1 {
		if lead := r.lead(lk); r.healthy(lead) {
			// The call without the channel: a copy, with the same key
			// and value in their interfaces.
			rl.lead, rl.quiet = lead, slices.Clone(rl.call)
			rl.quiet[len(rl.quiet)-1] = ""
			rl.channel = ch
		}
	}
	// A Release returns at a quorum's verdict, and its caller may cancel
	// its context at once. The requests still out must not end with it,
	// or the key stays held on their nodes, unannounced, until its TTL.
	rl.begin(context.WithoutCancel(ctx), r, rl, 0)
	// The nodes its acquisition never asked do not hold the value: they
	// count as a no at once.
	rl.fanOutExcept(r.neverAsked(value))
	err := rl.holderVerdict("release")
	// The nodes that failed so far may keep the value, and so may those
	// whose requests are still out, until they answer: the client's next
	// acquisition of the key may come before, and overtake them (see
	// leftovers). Only a release that succeeded is remembered. After
	// a failed one the core still counts the lock as held, until it
	// expires or a Release succeeds, so no acquisition may take its key.
	if err != nil {
		return err
	}
	var out *round
	if !rl.sync && rl.running.Load() > 0 {
		out = &rl.round
	}
	r.leftovers.add(lk, value, rl.failedSet, out)
	if late := r.lateSets.take(value); late != 0 {
		r.leftovers.addLate(lk, value, late) // its acquisition's SETs there got no answer
	}
	return nil
}

// releaseRound is the round of one Release: compare-and-delete on every
// node, announced by the key's lead alone when it is healthy.
type releaseRound struct {
	noHooks
	round
	call    []any         // releaseScript's, which announces on the key's channel
	quiet   []any         // for a release that only its lead announces: the call for the other nodes
	lead    int           // the node that announces, if quiet is set
	channel string        // the key's, if quiet is set
	value   string        // the released value
	prior   *acquireRound // the acquisition of value, if some of its requests are still out
	fill    *fillRound    // an extension's SETs of value, if some are still out
	lk      string        // the lock key
}

// ask runs the release script on node i, after the node's straggling
// acquisition or extension, if any: a release never overtakes its own
// SET.
func (rl *releaseRound) ask(ctx context.Context, i int, n Node) (bool, int64, error) {
	if rl.prior != nil {
		rl.prior.waitEnded(ctx, i)
	}
	if rl.fill != nil {
		rl.fill.waitEnded(ctx, i)
	}
	v, err := run(ctx, n, releaseScript, rl.callFor(i))
	return err == nil && v == 1, v, err
}

// callFor returns the release script's call for node i. Every node but
// the one that announces gets the quiet call.
func (rl *releaseRound) callFor(i int) []any {
	if rl.quiet != nil && i != rl.lead {
		return rl.quiet
	}
	return rl.call
}

// unsent keeps the release that node i's breaker held back, to send once
// the node answers again (see skipped).
func (rl *releaseRound) unsent(i int) { rl.r.skip(i, rl.callFor(i)) }

// afterAll remembers the nodes that may still hold the released value,
// and announces the release on the nodes that carried it out, if the lead
// that should have announced did not.
func (rl *releaseRound) afterAll() {
	rl.remember()
	if rl.quiet != nil && !rl.results[rl.lead].yes {
		rl.announceElsewhere()
	}
}

// remember tells the Redlock's leftovers which nodes may still hold the
// released value, once every request of the round has ended: those the
// release did not reach (it failed, or its node's breaker held it back),
// and those where the acquisition's SET got no answer and may land late.
// (Release told them, at its verdict, of the nodes that had failed, and of
// this round while its requests were out.)
func (rl *releaseRound) remember() {
	var nodes, late uint64
	for i, rep := range rl.results {
		switch {
		case rep.err != nil:
			nodes |= 1 << i
		case rep.yes:
		case rl.prior != nil && rl.prior.ended.Load()&(1<<i) != 0 && rl.prior.results[i].mayLandLate():
			late |= 1 << i // its SET may land after this release
		case rl.fill != nil && rl.fill.ended.Load()&(1<<i) != 0 && rl.fill.results[i].mayLandLate():
			late |= 1 << i // so may an extension's
		}
	}
	rl.r.leftovers.settle(rl.lk, rl.value, nodes, late, &rl.round)
}

// announceElsewhere announces a release that its lead did not carry out
// (and so did not announce) on the nodes that did. It runs once every
// request of the round has ended, so that no announcement overtakes its
// node's release.
func (rl *releaseRound) announceElsewhere() {
	ctx, cancel := context.WithTimeout(context.Background(), max(cleanupTimeout, rl.r.roundTimeout(0)))
	defer cancel()
	for i, rep := range rl.results {
		if rep.yes {
			// Best effort, like the announcement itself: waiters that miss
			// it try again at their retry strategy's pace.
			rl.r.nodes[i].Do(ctx, []any{"PUBLISH", rl.channel, rl.value}) //nolint:errcheck
		}
	}
}
