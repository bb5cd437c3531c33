package redlock

import (
	"context"
	"errors"
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
	unasked bool  // the request was not sent (the node's breaker is open)
}

// A kind is one kind of round: what it asks each node, and what it does
// as the requests end. Each kind is a small type that embeds round.
// Kinds without hooks embed noHooks.
type kind interface {
	// ask sends node n (the i-th) the kind's request, under ctx.
	ask(ctx context.Context, i int, n Node) (yes bool, val int64, err error)
	// unsent runs when node i's breaker kept the request from it.
	unsent(i int)
	// afterReply runs on node i's worker once its reply is in the round.
	afterReply(i int, rep reply)
	// afterAll runs once every request of the round has ended.
	afterAll()
}

// noHooks gives a kind the hooks that do nothing.
type noHooks struct{}

func (noHooks) unsent(int)            {}
func (noHooks) afterReply(int, reply) {}
func (noHooks) afterAll()             {}

// smallRound is the number of nodes whose replies fit in a round without
// an allocation of their own.
const smallRound = 5

// round sends one request to every node at once and tallies the replies.
// It decides as soon as the outcome is known: a hung or slow minority
// does not hold up a verdict, and a verdict that can no longer change is
// not waited for. It is the core that every kind of round embeds.
type round struct {
	r          *Redlock
	kind       kind // the round that embeds this one
	n, quorum  int
	nctx       context.Context    // the node timeout's
	cancel     context.CancelFunc // ends nctx once the last request ended
	ttl        time.Duration      // of an acquisition or extension, which bounds the timeout; 0 for other rounds
	timeout    time.Duration      // nctx's
	sync       bool               // one node, asked on the caller's goroutine
	askedAlone uint64             // bit i: node i was asked alone first, on the caller's goroutine
	running    atomic.Int32       // requests not yet ended
	ended      atomic.Uint64      // bit i: node i's request has ended
	allEnded   chan struct{}      // if a kind made it: closed once every request has ended
	done       chan int           // the nodes whose replies are in, in the order they came
	results    []reply            // by node
	small      [smallRound]reply  // results' storage, for up to smallRound nodes
	counts
}

// counts are a round's replies tallied so far.
type counts struct {
	got     int         // replies tallied
	tallied uint64      // bit i: node i's reply is tallied
	yes, no int         // nodes that said yes, and no
	yesSet  uint64      // bit i: node i said yes
	max     int64       // the largest val among yes replies
	errs    []error     // the failed nodes'
	giveUp  *time.Timer // set by tally once the verdict hangs on nodes presumed hung
}

// begin readies the round of k on r's nodes, under the node timeout of a
// round for ttl (0 if it sets none). The node context's parent is ctx.
func (rd *round) begin(ctx context.Context, r *Redlock, k kind, ttl time.Duration) {
	rd.r, rd.kind, rd.ttl = r, k, ttl
	rd.n = len(r.nodes)
	rd.quorum = rd.n/2 + 1
	rd.timeout = r.roundTimeout(ttl)
	rd.nctx, rd.cancel = context.WithTimeout(ctx, rd.timeout)
	if rd.n <= smallRound {
		rd.results = rd.small[:rd.n]
	} else {
		rd.results = make([]reply, rd.n)
	}
}

// askAlone asks node i on the caller's goroutine, before fanOut, and
// returns its reply. fanOut then tallies it with the others.
func (rd *round) askAlone(i int) reply {
	rd.results[i] = rd.do(i)
	rd.askedAlone |= 1 << i
	return rd.results[i]
}

// fanOut asks every node not asked yet. With several nodes, each is
// asked on a worker goroutine (see workers), so that none waits for
// another. A single node is asked on the caller's goroutine.
func (rd *round) fanOut() {
	if rd.n == 1 {
		rd.results[0] = rd.do(0)
		rd.sync = true
		rd.cancel()
		return
	}
	rd.done = make(chan int, rd.n)
	rd.running.Store(int32(rd.n))
	for i := range rd.n {
		rd.r.workers.run(job{rd, i})
	}
}

// do asks node i through its health, which may hold the request back.
func (rd *round) do(i int) reply {
	node := rd.r.nodes[i]
	h := &rd.r.health[i]
	req, ok := h.begin(rd.r.epoch, rd.timeout)
	if !ok {
		rd.kind.unsent(i)
		return reply{err: &NodeError{Node: node.String(), Err: errNodeHung}, unasked: true}
	}
	yes, val, err := rd.kind.ask(rd.nctx, i, node)
	h.end(rd.r.epoch, rd.nctx, req, err)
	if err != nil {
		return reply{err: &NodeError{Node: node.String(), Err: err}}
	}
	rd.r.sendSkipped(i)
	return reply{yes: yes, val: val}
}

// async is node i's part of the round, on a worker's goroutine.
func (rd *round) async(i int) {
	rep := rd.results[i] // asked already, if askAlone asked it
	if rd.askedAlone&(1<<i) == 0 {
		rep = rd.do(i)
		rd.results[i] = rep
	}
	rd.ended.Or(1 << i)
	rd.done <- i
	rd.kind.afterReply(i, rep)
	if rd.running.Add(-1) == 0 {
		rd.cancel()
		if rd.allEnded != nil {
			close(rd.allEnded)
		}
		rd.kind.afterAll()
	}
}

// waitEnded waits until the round's request to node i has ended, or ctx
// is done.
func (rd *round) waitEnded(ctx context.Context, i int) {
	if rd.ended.Load()&(1<<i) != 0 {
		return
	}
	select {
	case <-rd.allEnded:
	case <-ctx.Done():
	}
}

// holderVerdict tallies the round of an operation op by a key's holder
// (an extension, a release): nil once a quorum agreed, driver.ErrNotHeld
// once a quorum said the value does not hold the key, else the round's
// error.
func (rd *round) holderVerdict(op string) error {
	switch rd.tally() {
	case granted:
		return nil
	case refused:
		return driver.ErrNotHeld
	}
	return rd.err(op)
}

// tally reads replies until the outcome is decided, or until every node
// has answered. A verdict that hangs on nodes presumed hung (their
// breakers are open) waits for them no longer than the round's patience.
// Then the round fails, and its probes of those nodes go on without it,
// so that a node that answers late still closes its breaker.
func (rd *round) tally() verdict {
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
		case rep.err != nil: // take keeps the error
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

// next waits for the next node's reply and returns it, with the node's
// index. A failed node's error joins the round's errors.
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
// (see hangsOnHung). Then it waits for the next reply for the round's
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
		if rd.tallied&(1<<i) == 0 && rd.r.health[i].open() {
			hung++
		}
	}
	reach := rd.n - rd.got - hung
	return hung > 0 && rd.yes+reach < rd.quorum && rd.no+reach < lose
}

// presumeHung adds the errors of the nodes presumed hung whose replies the
// round did not wait for.
func (rd *round) presumeHung() {
	for i, n := range rd.r.nodes {
		if rd.tallied&(1<<i) == 0 && rd.r.health[i].open() {
			rd.errs = append(rd.errs, &NodeError{Node: n.String(), Err: errPresumedHung})
		}
	}
}

// err describes a round that reached no quorum because nodes failed.
func (rd *round) err(op string) error {
	return &QuorumError{Op: op, Nodes: rd.n, Quorum: rd.quorum, Yes: rd.yes, No: rd.no, Errs: rd.errs}
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
