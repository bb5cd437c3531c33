package redlock

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
)

// verdict is the outcome of one round of requests to the nodes.
type verdict int

const (
	undecided verdict = iota
	granted           // a quorum said yes
	refused           // so many said no that a quorum of yes is out of reach
	failed            // errors put both a quorum of yes and one of no out of reach
)

// reply is one node's answer in a round.
type reply struct {
	node int
	yes  bool  // the node did what was asked
	val  int64 // the script's reply, for the fencing counter
	err  error // the node did not answer, or answered with an error
}

// round sends one request to every node at once and tallies the replies,
// deciding as soon as the outcome is known: a hung or slow minority does not
// hold up a verdict, and a verdict that can no longer change is not waited
// for.
type round struct {
	nodes     []Node
	n, quorum int
	ask       func(ctx context.Context, i int, n Node) (yes bool, val int64, err error)
	cleanup   func(Node)
	nctx      context.Context    // the node timeout's context
	cancel    context.CancelFunc // ends nctx; called when the last node is done
	running   atomic.Int32       // node requests not yet done
	replies   chan reply
	decided   chan struct{} // closed by finish, if there is a cleanup
	failing   atomic.Bool   // the final outcome is a failure; set before decided closes
	sync      *reply        // with one node, its reply, asked on the caller's goroutine

	// For acquisitions: the value acquired, which nodes' requests have
	// ended, and a channel closed when all have, so that a release does
	// not overtake a straggling SET on its node.
	r        *Redlock
	value    string
	ended    atomic.Uint64
	allEnded chan struct{}

	got     int // replies tallied
	yes, no int
	yesSet  uint64 // bit i: node i said yes
	max     int64  // the largest val among yes replies
	errs    []error
}

// start runs ask on each node under the node timeout, and returns the
// round to tally. With several nodes, each is asked on a goroutine of its
// own, so that none waits for another; a single node is asked on the
// caller's goroutine. If cleanup is not nil, it is called for each node
// once the round is finished, if the round failed and the node did not say
// no (a node that said no changed nothing), but never before that node's
// own request has ended. The node context ends when the last node is done.
func (r *Redlock) start(ctx context.Context, ask func(ctx context.Context, i int, n Node) (yes bool, val int64, err error), cleanup func(Node)) *round {
	n := len(r.nodes)
	rd := &round{nodes: r.nodes, n: n, quorum: n/2 + 1, ask: ask, cleanup: cleanup}
	rd.nctx, rd.cancel = context.WithTimeout(ctx, r.cfg.nodeTimeout)
	if n == 1 {
		rep := rd.do(0)
		rd.sync = &rep
		rd.cancel()
		return rd
	}
	rd.replies = make(chan reply, n)
	if cleanup != nil {
		rd.decided = make(chan struct{})
		rd.allEnded = make(chan struct{})
		rd.r = r
	}
	rd.running.Store(int32(n))
	for i := range rd.nodes {
		go rd.async(i)
	}
	return rd
}

// do asks node i.
func (rd *round) do(i int) reply {
	node := rd.nodes[i]
	yes, val, err := rd.ask(rd.nctx, i, node)
	if err != nil {
		err = &NodeError{Node: node.String(), Err: err}
	}
	return reply{node: i, yes: yes, val: val, err: err}
}

// async asks node i on its own goroutine, and cleans up after it if the
// round fails.
func (rd *round) async(i int) {
	rep := rd.do(i)
	rd.ended.Or(1 << i)
	rd.replies <- rep
	if rd.decided != nil {
		<-rd.decided
		if rd.failing.Load() && (rep.yes || rep.err != nil) {
			rd.cleanup(rd.nodes[i])
		}
	}
	if rd.running.Add(-1) == 0 {
		rd.cancel()
		if rd.allEnded != nil {
			close(rd.allEnded)
			rd.r.untrack(rd)
		}
	}
}

// waitEnded waits until the request of the round to node i has ended, or
// ctx is done.
func (rd *round) waitEnded(ctx context.Context, i int) {
	if rd.ended.Load()&(1<<i) != 0 {
		return
	}
	select {
	case <-rd.allEnded:
	case <-ctx.Done():
	}
}

// tally reads replies until the outcome is decided, or until every node
// has answered.
func (rd *round) tally() verdict {
	lose := rd.n - rd.quorum + 1 // no's that make a quorum of yes impossible
	for rd.got < rd.n {
		var rep reply
		if rd.sync != nil {
			rep = *rd.sync
		} else {
			rep = <-rd.replies
		}
		rd.got++
		switch {
		case rep.err != nil:
			rd.errs = append(rd.errs, rep.err)
		case rep.yes:
			rd.yes++
			rd.yesSet |= 1 << rep.node
			rd.max = max(rd.max, rep.val)
		default:
			rd.no++
		}
		left := rd.n - rd.got
		switch {
		case rd.yes >= rd.quorum:
			return granted
		case rd.no >= lose:
			return refused
		case rd.yes+left < rd.quorum && rd.no+left < lose:
			return failed
		}
	}
	return failed // unreachable: with every reply in, one case above holds
}

// finish ends the round, telling the node goroutines whether it failed.
func (rd *round) finish(failure bool) {
	switch {
	case rd.sync != nil:
		if failure && rd.cleanup != nil && (rd.sync.yes || rd.sync.err != nil) {
			// The node's request has ended: the cleanup cannot overtake
			// it, and the caller need not wait for it.
			go rd.cleanup(rd.nodes[0])
		}
	case rd.decided != nil:
		rd.failing.Store(failure)
		close(rd.decided)
	}
}

// err describes a round that reached no quorum because nodes failed.
func (rd *round) err(op string) error {
	return &QuorumError{Op: op, Nodes: rd.n, Quorum: rd.quorum, Yes: rd.yes, No: rd.no, Errs: rd.errs}
}

// NodeError is the failure of one node in a round.
type NodeError struct {
	Node string // the node's address
	Err  error
}

func (e *NodeError) Error() string { return e.Node + ": " + e.Err.Error() }
func (e *NodeError) Unwrap() error { return e.Err }

// QuorumError reports a round that could not reach a quorum, either way,
// because too many nodes were unavailable: it is never a sign that someone
// else holds the key. Errs holds the failed nodes' errors (of type
// *NodeError), reachable through errors.Is and errors.As.
type QuorumError struct {
	Op     string // "acquire", "fence", "extend", "release"
	Nodes  int    // nodes in all
	Quorum int    // yes answers needed
	Yes    int    // nodes that said yes before the round ended
	No     int    // nodes that said no
	Errs   []error
}

func (e *QuorumError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "redlock %s: nodes unavailable: %d of %d nodes failed, %d agreed, %d refused (a quorum is %d)",
		e.Op, len(e.Errs), e.Nodes, e.Yes, e.No, e.Quorum)
	for _, err := range e.Errs {
		b.WriteString("; ")
		b.WriteString(err.Error())
	}
	return b.String()
}

// Unwrap returns the nodes' errors.
func (e *QuorumError) Unwrap() []error { return e.Errs }
