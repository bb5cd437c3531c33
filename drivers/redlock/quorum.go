package redlock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/distlock/lock/driver"
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
	yes     bool  // the node did what was asked
	val     int64 // the script's reply, for the fencing counter
	err     error // the node did not answer, or answered with an error
	unasked bool  // the request was not sent (the node's breaker is open): nothing to undo
}

// askFunc asks node n (the i-th) for what round rd is about, under ctx
// (the node timeout's). The askFuncs are plain functions that find their
// arguments in the round, so that starting a round allocates no closure.
type askFunc func(rd *round, ctx context.Context, i int, n Node) (yes bool, val int64, err error)

// smallRound is the number of nodes whose replies fit in a round without
// an allocation of their own.
const smallRound = 5

// round sends one request to every node at once and tallies the replies,
// deciding as soon as the outcome is known: a hung or slow minority does not
// hold up a verdict, and a verdict that can no longer change is not waited
// for.
type round struct {
	r         *Redlock
	nodes     []Node
	n, quorum int
	ask       askFunc
	parent    context.Context    // the caller's
	nctx      context.Context    // the node timeout's context
	cancel    context.CancelFunc // ends nctx; called when the last node is done
	running   atomic.Int32       // node requests not yet done
	done      chan int           // the nodes whose replies are in, in the order they came
	results   []reply            // by node
	small     [smallRound]reply  // results' storage, for up to smallRound nodes
	decided   chan struct{}      // closed by finish, if the round undoes a failure
	failing   atomic.Bool        // the final outcome is a failure; set before decided closes
	sync      bool               // with one node: asked on the caller's goroutine
	leadFirst bool               // an acquisition that asks its key's lead node first (see Acquire)
	lead      int                // the lead node, if leadFirst
	short     bool               // the lead refused: no other node was asked, and the round is refused
	detached  bool               // the requests outlive the caller's cancellation (releases), bounded by the node timeout only
	ttl       time.Duration      // of an acquisition or extension, which bounds the node timeout; 0 for other rounds
	timeout   time.Duration      // the node timeout, nctx's

	// What the askFuncs need.
	args    []any        // the command, or the script call, sent to every node
	quiet   []any        // for a release that only its lead announces: the script call for the other nodes
	channel string       // and the channel it announces on
	script  *Script      // the script of args, if it is one
	prior   *round       // a release's straggling acquisition, the acquisition a fence follows, or an acquisition's failed predecessor being undone
	seen    []inspection // for an inspection: what each node holds, by node (see askInspect)

	// For acquisitions: whether to undo a failure, with what, which
	// nodes' requests have ended, and a channel closed when all have, so
	// that a release does not overtake a straggling SET on its node.
	undo      bool
	lk, value string
	ended     atomic.Uint64
	allEnded  chan struct{}
	undone    []chan struct{} // for a failure: closed, by node, once the node's undo is done (or needed none)

	got     int         // replies tallied
	tallied uint64      // bit i: node i's reply is tallied
	giveUp  *time.Timer // set by tally once the verdict hangs on nodes presumed hung
	yes, no int
	yesSet  uint64 // bit i: node i said yes
	max     int64  // the largest val among yes replies
	errs    []error
}

// newRound returns a round that asks every node with ask and args, for the
// caller to complete and start.
func (r *Redlock) newRound(ctx context.Context, ask askFunc, args []any) *round {
	n := len(r.nodes)
	return &round{r: r, nodes: r.nodes, n: n, quorum: n/2 + 1, ask: ask, args: args, parent: ctx}
}

// start runs ask on each node under the node timeout, and returns the
// round to tally. With several nodes, each is asked on a worker goroutine
// of its own (see workers), so that none waits for another; a single node
// is asked on the caller's goroutine. If the round undoes failures, a
// failed round is undone on each node that did not say no (a node that
// said no changed nothing), but never before that node's own request has
// ended. The node context ends when the last node is done.
func (rd *round) start() *round {
	parent := rd.parent
	if rd.detached {
		parent = context.WithoutCancel(parent)
	}
	rd.timeout = rd.r.roundTimeout(rd.ttl)
	rd.nctx, rd.cancel = context.WithTimeout(parent, rd.timeout)
	if rd.n <= smallRound {
		rd.results = rd.small[:rd.n]
	} else {
		rd.results = make([]reply, rd.n)
	}
	if rd.n == 1 {
		rd.results[0] = rd.do(0)
		rd.sync = true
		rd.cancel()
		return rd
	}
	if rd.leadFirst {
		// Asked alone first, on the caller's goroutine: a refusal there
		// ends the round with nothing taken anywhere. Any other answer, or
		// none, is tallied with the others' (its undo, if the round fails,
		// is its worker's).
		rd.results[rd.lead] = rd.do(rd.lead)
		if rep := rd.results[rd.lead]; rep.err == nil && !rep.yes {
			rd.short = true
			rd.cancel()
			return rd
		}
	}
	rd.done = make(chan int, rd.n)
	if rd.undo {
		rd.decided = make(chan struct{})
		rd.allEnded = make(chan struct{})
	}
	rd.running.Store(int32(rd.n))
	for i := range rd.nodes {
		rd.r.workers.run(job{rd, i})
	}
	return rd
}

// do asks node i.
func (rd *round) do(i int) reply {
	node := rd.nodes[i]
	b := &rd.r.breakers[i]
	start := time.Now()
	ok, probe := b.admit(int64(start.Sub(rd.r.epoch)), silence(&rd.r.rtt[i], rd.timeout))
	if !ok {
		if rd.script == releaseScript {
			rd.r.skip(i, rd.releaseCall(i)) // sent once the node answers again
		}
		return reply{err: &NodeError{Node: node.String(), Err: errNodeHung}, unasked: true}
	}
	backoff := rd.r.rtt[i].backoff.Load()
	yes, val, err := rd.ask(rd, rd.nctx, i, node)
	end := time.Now()
	timeout := b.done(rd.nctx, int64(end.Sub(rd.r.epoch)), probe, err)
	if err == nil {
		rd.r.rtt[i].add(end.Sub(start))
		rd.r.sendSkipped(i)
	} else {
		if timeout {
			rd.r.rtt[i].timedOut(backoff)
		}
		err = &NodeError{Node: node.String(), Err: err}
	}
	return reply{yes: yes, val: val, err: err}
}

// async asks node i, on a worker's goroutine (so that no node waits for
// another), and undoes the acquisition there if the round fails.
func (rd *round) async(i int) {
	var rep reply
	if rd.leadFirst && i == rd.lead {
		rep = rd.results[i] // asked already, by start
	} else {
		rep = rd.do(i)
	}
	rd.results[i] = rep
	rd.ended.Or(1 << i)
	rd.done <- i
	if rd.decided != nil {
		<-rd.decided
		if rd.failing.Load() && rep.mayHaveTakenEffect() {
			rd.undoOn(i)
		}
		if rd.undone != nil {
			close(rd.undone[i])
		}
	}
	if rd.running.Add(-1) == 0 {
		rd.cancel()
		if rd.quiet != nil && !rd.results[rd.lead].yes {
			rd.announceElsewhere()
		}
		if rd.allEnded != nil {
			close(rd.allEnded)
			rd.r.untrack(rd)
		}
	}
}

// announceElsewhere announces a release that its lead did not carry out
// (and so did not announce) on the nodes that did; it runs once every
// request of the round has ended, so that no announcement overtakes its
// node's release.
func (rd *round) announceElsewhere() {
	ctx, cancel := context.WithTimeout(context.Background(), max(cleanupTimeout, rd.r.roundTimeout(0)))
	defer cancel()
	for i, rep := range rd.results {
		if rep.yes {
			// Best effort, like the announcement itself: waiters that miss
			// it try again at their retry strategy's pace.
			rd.nodes[i].Do(ctx, []any{"PUBLISH", rd.channel, rd.value}) //nolint:errcheck
		}
	}
}

// undoOn undoes the round's acquisition on node i.
func (rd *round) undoOn(i int) {
	rd.r.undo(rd.parent, rd.nodes[i], rd.lk, rd.value)
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

// waitUndone waits until the failed round is undone on node i (or needed
// no undoing there), or ctx is done.
func (rd *round) waitUndone(ctx context.Context, i int) {
	select {
	case <-rd.undone[i]:
	case <-ctx.Done():
	}
}

// mayHaveTakenEffect reports whether the request may have changed its
// node: it was answered yes, or it failed in a way that does not prove
// that the node never ran it (see neverRan).
func (rep reply) mayHaveTakenEffect() bool {
	return rep.yes || rep.err != nil && !rep.unasked && !neverRan(rep.err)
}

// neverRan reports whether err, a node's failure, proves that the node did
// not run the request: the connection was refused, or the node refused the
// client as misconfigured (see misconfigured). Undoing such a request is a
// request for nothing.
func neverRan(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, driver.ErrMisconfigured)
}

// next waits for the next node's reply and returns it, with the node's
// index; a failed node's error joins the round's errors.
func (rd *round) next() (int, reply) {
	i := 0
	if !rd.sync {
		i = <-rd.done
	}
	return rd.take(i)
}

// take tallies the reply of node i.
func (rd *round) take(i int) (int, reply) {
	rd.got++
	rd.tallied |= 1 << i
	rep := rd.results[i]
	if rep.err != nil {
		rd.errs = append(rd.errs, rep.err)
	}
	return i, rep
}

// nextOrGiveUp is next, unless the verdict hangs on nodes presumed hung
// (see hangsOnHung): then it waits for the next reply for the round's
// patience at most (see Redlock.patience), and reports false if none came.
func (rd *round) nextOrGiveUp(lose int) (int, reply, bool) {
	if rd.sync || !rd.hangsOnHung(lose) {
		i, rep := rd.next()
		return i, rep, true
	}
	if rd.giveUp == nil {
		rd.giveUp = time.NewTimer(rd.r.patience(rd.ttl))
	}
	select {
	case i := <-rd.done:
		i, rep := rd.take(i)
		return i, rep, true
	case <-rd.giveUp.C:
		return 0, reply{}, false
	}
}

// hangsOnHung reports whether the round's verdict hangs on nodes whose
// breakers are open (presumed hung): without their replies, neither a
// quorum of yes nor one of no can be reached.
func (rd *round) hangsOnHung(lose int) bool {
	hung := 0
	for i := range rd.n {
		if rd.tallied&(1<<i) == 0 && rd.r.breakers[i].open() {
			hung++
		}
	}
	reach := rd.n - rd.got - hung
	return hung > 0 && rd.yes+reach < rd.quorum && rd.no+reach < lose
}

// presumeHung adds the errors of the nodes presumed hung whose replies the
// round did not wait for.
func (rd *round) presumeHung() {
	for i, n := range rd.nodes {
		if rd.tallied&(1<<i) == 0 && rd.r.breakers[i].open() {
			rd.errs = append(rd.errs, &NodeError{Node: n.String(), Err: errPresumedHung})
		}
	}
}

// tally reads replies until the outcome is decided, or until every node
// has answered. A verdict that hangs on nodes presumed hung (their
// breakers are open) waits for them no longer than the round's patience:
// then the round fails, and its probes of those nodes go on without it,
// so that a node that answers late still closes its breaker.
func (rd *round) tally() verdict {
	if rd.short {
		rd.got, rd.no = 1, 1
		return refused
	}
	defer func() {
		if rd.giveUp != nil {
			rd.giveUp.Stop()
		}
	}()
	lose := rd.n - rd.quorum + 1 // no's that make a quorum of yes impossible
	for rd.got < rd.n {
		i, rep, ok := rd.nextOrGiveUp(lose)
		if !ok {
			rd.presumeHung()
			return failed
		}
		switch {
		case rep.err != nil: // next keeps the error
		case rep.yes:
			rd.yes++
			rd.yesSet |= 1 << i
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
	case rd.short: // nothing was taken
	case rd.sync:
		if rep := rd.results[0]; failure && rd.undo && rep.mayHaveTakenEffect() {
			// The node's request has ended: the undo cannot overtake
			// it, and the caller need not wait for it.
			go rd.undoOn(0)
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

// Is reports whether the node's failure is a misconfiguration (see
// misconfigured), for target [driver.ErrMisconfigured]: so a
// [QuorumError] matches it if one of its nodes failed that way.
func (e *NodeError) Is(target error) bool {
	return target == driver.ErrMisconfigured && misconfigured(e.Err)
}

// refusals are the beginnings of the replies with which Redis refuses a
// client's credentials or rights: a wrong user or password (WRONGPASS; ERR
// invalid password before Redis 6), none where one is required (NOAUTH),
// one where none is set (ERR AUTH ... called without any password
// configured; ERR Client sent AUTH before Redis 6), a user without the
// rights to the commands or keys (NOPERM).
var refusals = []string{"WRONGPASS", "NOAUTH", "NOPERM", "ERR AUTH ", "ERR invalid password", "ERR Client sent AUTH"}

// misconfigured reports whether err, a node's failure, is one that
// retrying cannot fix: the node refused the credentials or rights (see
// refusals), a host name does not resolve, or the TLS handshake failed on
// a certificate or on a protocol mismatch. The Redis drivers mark
// mismatches that they recognize themselves with driver.ErrMisconfigured.
func misconfigured(err error) bool {
	if driver.IsMisconfigured(err) {
		return true
	}
	msg := err.Error()
	for _, r := range refusals {
		if strings.HasPrefix(msg, r) {
			return true
		}
	}
	return false
}

// QuorumError reports a round that could not reach a quorum, either way,
// because too many nodes failed or did not answer: it is never a sign that
// someone else holds the key. Errs holds the failed nodes' errors (of type
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
	what := "unavailable"
	if errors.Is(e, driver.ErrMisconfigured) {
		what = "misconfigured"
	}
	fmt.Fprintf(&b, "redlock %s: nodes %s: %d of %d nodes failed, %d agreed, %d refused (a quorum is %d)",
		e.Op, what, len(e.Errs), e.Nodes, e.Yes, e.No, e.Quorum)
	for _, err := range e.Errs {
		b.WriteString("; ")
		b.WriteString(err.Error())
	}
	return b.String()
}

// Unwrap returns the nodes' errors.
func (e *QuorumError) Unwrap() []error { return e.Errs }

// Is reports whether target is [driver.ErrUnavailable], which every
// QuorumError matches. One whose nodes refused the client's credentials,
// TLS settings or host names matches [driver.ErrMisconfigured] as well,
// through their errors.
func (e *QuorumError) Is(target error) bool { return target == driver.ErrUnavailable }
