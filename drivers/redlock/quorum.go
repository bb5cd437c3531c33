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
	n, quorum int
	replies   chan reply
	decided   chan struct{}      // closed by finish
	failing   atomic.Bool        // the round's final outcome is a failure; set before decided closes
	cancel    context.CancelFunc // ends the node contexts; called by the last node goroutine

	yes, no int
	yesSet  uint64 // bit i: node i said yes
	max     int64  // the largest val among yes replies
	errs    []error
}

// start runs ask on each node of r in its own goroutine, each under the
// node timeout, and returns the round to tally. If cleanup is not nil, each
// goroutine waits after its reply until the round is finished and, if the
// round failed, calls cleanup for its node unless the node said no (a node
// that said no changed nothing). The node contexts end when the last
// goroutine is done.
func (r *Redlock) start(ctx context.Context, ask func(ctx context.Context, i int, n Node) (yes bool, val int64, err error), cleanup func(Node)) *round {
	n := len(r.nodes)
	rd := &round{n: n, quorum: n/2 + 1, replies: make(chan reply, n), decided: make(chan struct{})}
	nctx, cancel := context.WithTimeout(ctx, r.cfg.nodeTimeout)
	rd.cancel = cancel
	var running atomic.Int32
	running.Store(int32(n))
	for i, node := range r.nodes {
		go func() {
			yes, val, err := ask(nctx, i, node)
			if err != nil {
				err = &NodeError{Node: node.String(), Err: err}
			}
			rd.replies <- reply{node: i, yes: yes, val: val, err: err}
			if cleanup != nil {
				<-rd.decided
				if rd.failing.Load() && (yes || err != nil) {
					cleanup(node)
				}
			}
			if running.Add(-1) == 0 {
				rd.cancel()
			}
		}()
	}
	return rd
}

// tally reads replies until the outcome is decided, or until every node
// has answered.
func (rd *round) tally() verdict {
	lose := rd.n - rd.quorum + 1 // no's that make a quorum of yes impossible
	for got := 0; got < rd.n; got++ {
		rep := <-rd.replies
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
		left := rd.n - got - 1
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
	rd.failing.Store(failure)
	close(rd.decided)
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
