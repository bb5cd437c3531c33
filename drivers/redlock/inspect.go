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

// Inspect reports the value that a quorum of nodes holds for key. It runs
// one round of a script that reads the value, its PTTL and the key's
// fencing counter, one round trip per node under the node timeout. The
// TTL is the smallest time left among the first quorum found holding the
// value, so a quorum holds it at least that long. With fencing on, the
// token is the largest counter among those nodes. The nodes where the
// holder's token write landed hold exactly that token, and any quorum of
// holders includes one of them. Nobody holds the key if the answers rule
// out a quorum for every value. If nodes that did not answer could still
// make one, Inspect fails with a [*QuorumError].
func (r *Redlock) Inspect(ctx context.Context, key string) (driver.Holder, bool, error) {
	lk := r.lockKey(key)
	in := &inspectRound{call: inspectScript.call([]string{lk, r.fenceKey(lk)}), seen: make([]inspection, len(r.nodes))}
	in.begin(ctx, r, in, 0)
	in.fanOut()
	t, decided := in.tallyHolders()
	in.stopTimers()
	switch {
	case !decided:
		return driver.Holder{}, false, in.err("inspect")
	case t == nil:
		return driver.Holder{}, false, nil
	}
	h := driver.Holder{Value: t.value, TTL: time.Duration(max(t.pttl, 0)) * time.Millisecond}
	if r.cfg.fencing && t.fence > 0 {
		h.Lease = driver.Lease{Token: t.fence, Fenced: true}
	}
	return h, true, nil
}

// inspectRound is the round of one Inspect: it reads what every node
// holds for a key, and tallies the values.
type inspectRound struct {
	noHooks
	round
	call []any        // inspectScript's
	seen []inspection // what each node holds, by node
}

// ask runs the inspect script, keeps what the node holds, and counts a
// node that holds a value as a yes.
func (in *inspectRound) ask(ctx context.Context, i int, n Node) (bool, int64, error) {
	reply, err := eval(ctx, n, inspectScript, in.call)
	if err != nil || reply == nil {
		return false, 0, err
	}
	held, err := parseInspection(reply)
	if err != nil {
		return false, 0, err
	}
	in.seen[i] = held
	return true, 0, nil
}

// tallyHolders reads the replies until it can tell who holds the key. It
// returns the votes of the value a quorum holds, or nil if no value can
// have a quorum. decided is false if the nodes that failed leave it open.
// In the round's counts, yes is the most nodes that agreed on a value,
// and no the other nodes that answered.
func (in *inspectRound) tallyHolders() (t *votes, decided bool) {
	tally := make(map[string]*votes, 1)
	answered := 0
	for in.got < in.n {
		i, rep := in.next()
		switch {
		case rep.err != nil: // next keeps the error
		case rep.yes:
			answered++
			held := in.seen[i]
			v := tally[held.value]
			if v == nil {
				v = &votes{value: held.value, pttl: held.pttl}
				tally[held.value] = v
			}
			v.nodes++
			v.pttl, v.fence = min(v.pttl, held.pttl), max(v.fence, held.fence)
			in.yes = max(in.yes, v.nodes)
			if v.nodes >= in.quorum {
				return v, true
			}
		default:
			answered++
		}
		in.no = answered - in.yes
		unknown, pending := in.n-answered, in.n-in.got
		switch {
		case in.yes+unknown < in.quorum:
			return nil, true // not even the nodes yet unheard of could make a quorum
		case in.yes+pending < in.quorum && in.yes+len(in.errs) >= in.quorum:
			return nil, false // neither a holder nor nobody can be proven
		}
	}
	return nil, false // unreachable: with every reply in, one case above holds
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
