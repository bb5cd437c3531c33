package redlock

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/distlock/lock/driver"
)

var _ driver.Inspector = (*Redlock)(nil)

// inspection is what one node holds for a key.
type inspection struct {
	value string
	pttl  int64  // the value's time left, in milliseconds
	fence uint64 // the key's fencing counter, 0 if it has none
}

// votes is the tally of one value in an inspection round.
type votes struct {
	value string
	nodes int    // nodes that hold the value
	pttl  int64  // the smallest time left among them
	fence uint64 // the largest counter among them
}

// Inspect reports the value that a quorum of nodes holds for key, in one
// round of a script that reads the value, its PTTL and the key's fencing
// counter (one round trip per node, under the node timeout). Its TTL is the smallest time left among the first quorum of
// nodes found holding it, which is no later than the moment fewer than a
// quorum will hold it. With fencing on, its token is the largest counter
// among those nodes: the nodes where the holder's token write landed hold
// exactly that token (no later holder can write there while the value is
// held), and any quorum of holders includes one of them. Nobody holds the
// key if the nodes that answered rule out a quorum for every value; if
// nodes that did not answer could still make one, Inspect fails with a
// [*QuorumError].
func (r *Redlock) Inspect(ctx context.Context, key string) (driver.Holder, bool, error) {
	lk := r.lockKey(key)
	rd := r.newRound(ctx, askInspect, inspectScript.call([]string{lk, r.fenceKey(lk)}))
	rd.script = inspectScript
	rd.seen = make([]inspection, len(r.nodes))
	rd.start()
	defer rd.finish(false)
	t, decided := rd.tallyHolders()
	switch {
	case !decided:
		return driver.Holder{}, false, rd.err("inspect")
	case t == nil:
		return driver.Holder{}, false, nil
	}
	h := driver.Holder{Value: t.value, TTL: time.Duration(max(t.pttl, 0)) * time.Millisecond}
	if r.cfg.fencing && t.fence > 0 {
		h.Lease = driver.Lease{Token: t.fence, Fenced: true}
	}
	return h, true, nil
}

// tallyHolders reads the inspection round's replies until it can tell who
// holds the key: the votes of the value a quorum holds, or nil if no value
// can have a quorum; decided is false if the nodes that failed leave it
// open. In the round's counts, yes is the most nodes that agreed on a
// value, and no the other nodes that answered.
func (rd *round) tallyHolders() (t *votes, decided bool) {
	tally := make(map[string]*votes, 1)
	answered := 0
	for rd.got < rd.n {
		i, rep := rd.next()
		switch {
		case rep.err != nil: // next keeps the error
		case rep.yes:
			answered++
			in := rd.seen[i]
			v := tally[in.value]
			if v == nil {
				v = &votes{value: in.value, pttl: in.pttl}
				tally[in.value] = v
			}
			v.nodes++
			v.pttl, v.fence = min(v.pttl, in.pttl), max(v.fence, in.fence)
			rd.yes = max(rd.yes, v.nodes)
			if v.nodes >= rd.quorum {
				return v, true
			}
		default:
			answered++
		}
		rd.no = answered - rd.yes
		unknown, pending := rd.n-answered, rd.n-rd.got
		switch {
		case rd.yes+unknown < rd.quorum:
			return nil, true // not even the nodes yet unheard of could make a quorum
		case rd.yes+pending < rd.quorum && rd.yes+len(rd.errs) >= rd.quorum:
			return nil, false // neither a holder nor nobody can be proven
		}
	}
	return nil, false // unreachable: with every reply in, one case above holds
}

// askInspect runs the inspect script, keeps what the node holds in the
// round, and counts a node that holds a value as a yes.
func askInspect(rd *round, ctx context.Context, i int, n Node) (bool, int64, error) {
	reply, err := eval(ctx, n, rd.script, rd.args)
	if err != nil || reply == nil {
		return false, 0, err
	}
	in, err := parseInspection(reply)
	if err != nil {
		return false, 0, err
	}
	rd.seen[i] = in
	return true, 0, nil
}

// parseInspection reads a non-nil reply of the inspect script.
func parseInspection(reply any) (inspection, error) {
	a, ok := reply.([]any)
	if !ok || len(a) != 3 {
		return inspection{}, fmt.Errorf("inspect script replied %T: %w", reply, errNoReply)
	}
	v, okV := a[0].(string)
	pttl, okT := a[1].(int64)
	f, okF := a[2].(string)
	if !okV || !okT || !okF {
		return inspection{}, fmt.Errorf("inspect script replied %T, %T, %T: %w", a[0], a[1], a[2], errNoReply)
	}
	in := inspection{value: v, pttl: pttl}
	if f != "" {
		fence, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return inspection{}, fmt.Errorf("inspect script: fencing counter: %w", err)
		}
		in.fence = fence
	}
	return in, nil
}
