package redlock

import (
	"context"
	"errors"
	"math/bits"
	"sync"
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
	stalled bool  // the request failed while no other node answered either (see errStalled)
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
	parent     context.Context    // nctx's parent: the caller's
	limit      time.Duration      // how long the requests may take (see Redlock.limit)
	nctx       context.Context    // the requests': ends at the round's limit
	cancel     context.CancelFunc // ends nctx once the last request ended
	ttl        time.Duration      // of an acquisition or extension, which bounds the timeout; 0 for other rounds
	timeout    time.Duration      // the node timeout, backed off
	judgeAfter time.Duration      // the node timeout without its backoff: past it, a node that seems hung is given up (see judge)
	since      int64              // when the round began, in ns after the Redlock's epoch
	sync       bool               // one node, asked on the caller's goroutine
	askedAlone uint64             // bit i: node i was asked alone first, on the caller's goroutine
	deferred   uint64             // bit i: node i is held back until the nodes asked cannot decide (see fanOutQuorum)
	late       uint64             // bit i: node i was held back, then asked (see askDeferred)
	lateSince  int64              // when the nodes held back were asked, in ns after the Redlock's epoch
	dropped    uint64             // bit i: node i was held back, and never asked (see dropDeferred)
	hedgeAfter time.Duration      // when the nodes held back are asked if the round is undecided
	hedge      *time.Timer        // fires at hedgeAfter; nil before the round first waits
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
	got         int         // replies tallied
	tallied     uint64      // bit i: node i's reply is tallied
	yes, no     int         // nodes that said yes, and no
	yesSet      uint64      // bit i: node i said yes
	max         int64       // the largest val among yes replies
	errs        []error     // the failed nodes'
	failedSet   uint64      // bit i: node i failed (is among errs)
	firstAnswer int64       // when the first answer was tallied, in ns after the Redlock's epoch; 0 before
	giveUp      *time.Timer // set by tally once the verdict hangs on nodes presumed hung
	watch       watchman    // gives up nodes that seem hung past the node timeout
}

// begin readies the round of k on r's nodes, under the node timeout of a
// round for ttl (0 if it sets none). The node context's parent is ctx.
func (rd *round) begin(ctx context.Context, r *Redlock, k kind, ttl time.Duration) {
	rd.r, rd.kind, rd.ttl = r, k, ttl
	rd.n = len(r.nodes)
	rd.quorum = rd.n/2 + 1
	rd.timeout = r.roundTimeout(ttl)
	rd.judgeAfter = r.timeout(ttl, false)
	rd.since = int64(time.Since(r.epoch))
	rd.limit = rd.timeout // one node, asked on the caller's goroutine: nothing can judge it meanwhile
	if rd.n > 1 {
		rd.limit = r.limit(ttl, rd.timeout)
	}
	rd.parent = ctx
	rd.nctx, rd.cancel = context.WithTimeout(ctx, rd.limit)
	if rd.n <= smallRound {
		rd.results = rd.small[:rd.n]
	} else {
		rd.results = make([]reply, rd.n)
	}
}

// askAlone asks node i on the caller's goroutine, before fanOut, and
// returns its reply. fanOut then tallies it with the others. No watchman
// judges the node while the caller waits for it alone, so a hung node
// costs the attempt the round's limit; silentAlone then keeps the next
// attempts from asking it alone again. (Bounded by the node timeout
// instead, a woken waiter was refused once in make test and slept to its
// next poll, likely because the node it asked alone timed out on a loaded
// machine and it went on to nodes its holder's release had not reached.)
//
// A node that used up the round's limit alone leaves the others a limit
// of their own, from then on. Under the ended one, every request to them
// failed before it was sent, the round failed with no answer, and so
// silentAlone never ran: the next attempt asked the same hung node alone
// again, and Acquire failed with a healthy quorum up (with its lead among
// 2 of 5 nodes hung, for 10s, "context deadline exceeded" from every
// node, in CI). The lease's validity counts from the attempt's start, so
// the longer round shortens it and cannot stretch it.
func (rd *round) askAlone(i int) reply {
	rep := rd.do(i)
	rd.results[i] = rep
	rd.askedAlone |= 1 << i
	if rep.err != nil && rd.nctx.Err() != nil && rd.parent.Err() == nil {
		rd.cancel()
		rd.nctx, rd.cancel = context.WithTimeout(rd.parent, rd.limit)
		rd.since = int64(time.Since(rd.r.epoch))
	}
	return rep
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
	rd.fanOutTo(rd.all(), 0)
}

// fanOutExcept is fanOut, but for the nodes in never, which it does not
// ask and counts as a no at once (nodes that never saw the value, see
// Redlock.sparse). With never empty it is fanOut.
func (rd *round) fanOutExcept(never uint64) {
	if never == 0 {
		rd.fanOut()
		return
	}
	rd.fanOutTo(rd.all()&^never, 0)
}

// all is the set of the round's nodes.
func (rd *round) all() uint64 { return ^uint64(0) >> (64 - rd.n) }

// fanOutTo asks the nodes in mask, each on a worker goroutine, and
// tallies every other node at once: as a yes if it is in yes, as a no if
// not. fanOut gives it every node; a round that follows another, whose
// replies decided the nodes not asked (see fillRound), gives it the rest.
// mask must not be empty, and the round must have several nodes.
func (rd *round) fanOutTo(mask, yes uint64) {
	rd.done = make(chan int, rd.n)
	for i := range rd.n {
		if mask&(1<<i) != 0 {
			continue
		}
		rd.got++
		rd.tallied |= 1 << i
		rd.ended.Or(1 << i)
		if yes&(1<<i) != 0 {
			rd.yes++
			rd.yesSet |= 1 << i
		} else {
			rd.no++
		}
	}
	rd.running.Store(int32(bits.OnesCount64(mask)))
	for i := range rd.n {
		if mask&(1<<i) != 0 {
			rd.r.workers.run(job{rd, i})
		}
	}
}

// fanOutQuorum asks only as many nodes as can make a quorum of yes,
// counting node first if it was asked alone and said yes: healthy ones,
// in lk's rendezvous order, so that rivals for a key ask the same nodes
// and the first there wins them all. The other nodes are held back,
// counted as replies still to come, and asked (see askDeferred) once the
// nodes asked can no longer make a quorum of yes by themselves, or if the
// round is still undecided after the longest round trip that the nodes
// asked are expected to take (see Redlock.hedgeDelay): a hung or slow node
// among them costs the round about a round trip more, not a node timeout.
// An uncontended acquisition costs a quorum's requests, not every node's:
// two fewer of five, for the servers and the client alike. With too few
// healthy nodes to choose from, every node is asked at once. The nodes in
// also are asked at once too, and so are the unhealthy ones, as every
// round asked them before: held back, a node that came back would never
// be asked by a round that did not need it, and so never found healthy.
func (rd *round) fanOutQuorum(lk string, first int, alone bool, also uint64) {
	need := rd.quorum
	if alone && rd.results[first].yes {
		need--
	}
	ask, ok := rd.r.byRendezvous(lk, need, rd.askedAlone)
	if !ok {
		rd.fanOut() // too few healthy nodes to choose from: every node at once
		return
	}
	ask |= also | rd.r.unhealthy()
	rd.deferred = ^uint64(0) >> (64 - rd.n) &^ ask &^ rd.askedAlone
	rd.hedgeAfter = rd.r.hedgeDelay(ask, rd.judgeAfter)
	rd.done = make(chan int, rd.n)
	rd.running.Store(int32(rd.n))
	for i := range rd.n {
		if rd.deferred&(1<<i) == 0 {
			rd.r.workers.run(job{rd, i})
		}
	}
}

// askDeferred asks the nodes that fanOutQuorum held back.
func (rd *round) askDeferred() {
	if rd.hedge != nil {
		rd.r.timers.put(rd.hedge)
		rd.hedge = nil
	}
	m := rd.deferred
	rd.deferred = 0
	rd.late = m
	rd.lateSince = int64(time.Since(rd.r.epoch))
	for ; m != 0; m &= m - 1 {
		rd.r.workers.run(job{rd, bits.TrailingZeros64(m)})
	}
}

// dropDeferred ends the round's part of the nodes still held back once
// its verdict is in: they are never asked.
func (rd *round) dropDeferred() {
	m := rd.deferred
	if m == 0 {
		return
	}
	rd.deferred = 0
	rd.dropped = m
	rd.ended.Or(m)
	rd.requestsEnded(int32(bits.OnesCount64(m)))
}

// requestsEnded counts k of the round's requests out, and ends the round
// once none is left.
func (rd *round) requestsEnded(k int32) {
	if rd.running.Add(-k) == 0 {
		rd.cancel()
		if rd.allEnded != nil {
			close(rd.allEnded)
		}
		rd.kind.afterAll()
	}
}

// mustAskDeferred reports whether the round, undecided, needs the nodes
// held back: the yes so far and the requests still out to the nodes asked
// cannot make a quorum.
func (rd *round) mustAskDeferred() bool {
	if rd.deferred == 0 {
		return false
	}
	out := rd.n - rd.got - bits.OnesCount64(rd.deferred)
	return rd.yes+out < rd.quorum
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
	stalled := err != nil && rd.n > 1 && !rd.r.othersAnswered(i, req.start)
	if stalled {
		// Every node was silent as long: the client or the machine
		// stalled, and no node can be told hung. The request failed, and
		// its node's breaker does not count it.
		h.end(rd.r.epoch, rd.nctx, req, errStalled)
	} else {
		h.end(rd.r.epoch, rd.nctx, req, err)
	}
	if err != nil {
		return reply{err: &NodeError{Node: node.String(), Err: err}, stalled: stalled}
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
	rd.requestsEnded(1)
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
	defer rd.dropDeferred()
	defer rd.stopTimers()
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
		case rd.yes+rd.no >= lose && rd.no+left < lose && rd.releasing():
			// A release is done once the value is gone from so many nodes
			// that the rest cannot make a quorum: deleted where it was,
			// absent where the acquisition never set it; and the replies
			// still out can no longer make it a refusal, which tells a
			// former holder that its lease had run out (Release_notOwner
			// once got nil from a release decided before its last no).
			// A slow node given up then fails the release no more.
			return granted
		case rd.yes+left < rd.quorum && rd.no+left < lose:
			return failed
		}
		if rd.mustAskDeferred() {
			rd.askDeferred()
		}
	}
	return failed // unreachable: with every reply in, one case above holds
}

// releasing reports whether the round is a release's.
func (rd *round) releasing() bool {
	_, ok := rd.kind.(*releaseRound)
	return ok
}

// next waits for the next node's reply and returns it, with the node's
// index. A failed node's error joins the round's errors. A node given up
// as hung (see judge) is returned as failed, without its reply.
func (rd *round) next() (int, reply) {
	i, rep, _ := rd.wait(nil)
	return i, rep
}

// wait is next, and reports false if patience fires first.
func (rd *round) wait(patience <-chan time.Time) (int, reply, bool) {
	if rd.sync {
		i, rep := rd.take(0)
		return i, rep, true
	}
	for {
		if i, ok := rd.watch.judged(); ok {
			i, rep := rd.giveUpOn(i)
			return i, rep, true
		}
		var hedge <-chan time.Time
		if rd.deferred != 0 {
			if rd.hedge == nil {
				rd.hedge = rd.r.timers.get(rd.hedgeAfter)
			}
			hedge = rd.hedge.C
		}
		select {
		case i := <-rd.done:
			if rd.tallied&(1<<i) != 0 {
				continue // given up on already
			}
			i, rep := rd.take(i)
			return i, rep, true
		case <-patience:
			return 0, reply{}, false
		case <-hedge:
			// A node asked is slower than expected, or hung: the nodes
			// held back may decide without it.
			rd.askDeferred()
		case <-rd.watch.tick(&rd.r.timers, rd.judgeAfter):
			rd.judge()
		}
	}
}

// take tallies the reply of node i.
func (rd *round) take(i int) (int, reply) {
	rd.got++
	rd.tallied |= 1 << i
	rep := rd.results[i]
	if rep.err != nil {
		rd.errs = append(rd.errs, rep.err)
		rd.failedSet |= 1 << i
	} else if rd.firstAnswer == 0 && !rd.sync {
		rd.firstAnswer = int64(time.Since(rd.r.epoch))
		rd.silentAlone()
	}
	return i, rep
}

// silentAlone gives up, at the round's first answer, the node asked alone
// if its request failed while no other node answered (a silence, or a
// failure as fast as a refused connection). Alone, its silence could not
// be told from the client's own stall (no other request was out to
// answer), so its breaker did not count it; now another node has
// answered. Given up, the
// node is not healthy until it answers again, so that the next attempts
// do not ask it alone first: when every client woken by a release asked
// a hung lead alone, nobody asked the others, and its silences never
// counted (an Acquire with 2 of 5 nodes hung failed for 10s in make test).
func (rd *round) silentAlone() {
	for m := rd.askedAlone; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		if rd.results[i].stalled {
			rd.r.health[i].gaveUp(rd.firstAnswer, rd.judgeAfter)
		}
	}
}

// giveUpOn tallies node i, given up as hung, as failed. Its request goes
// on until the round's limit, so that a late answer still teaches its
// health.
func (rd *round) giveUpOn(i int) (int, reply) {
	rd.got++
	rd.tallied |= 1 << i
	rep := reply{err: &NodeError{Node: rd.r.nodes[i].String(), Err: errGaveUp}}
	rd.errs = append(rd.errs, rep.err)
	rd.failedSet |= 1 << i
	return i, rep
}

// nextOrGiveUp is next, unless the verdict hangs on nodes presumed hung
// (see hangsOnHung). Then it waits for the next reply for the round's
// patience at most (see Redlock.patience), and reports false if none came.
func (rd *round) nextOrGiveUp(lose int) (int, reply, bool) {
	var patience <-chan time.Time
	if !rd.sync && rd.hangsOnHung(lose) {
		if rd.giveUp == nil {
			rd.giveUp = time.NewTimer(rd.r.patience(rd.ttl))
		}
		patience = rd.giveUp.C
	}
	return rd.wait(patience)
}

// judge runs at the watchman's ticks, from the node timeout on. Once the
// client has run on time for a grace (two ticks in a row came on time), it
// gives up the nodes that seem hung: silent for the node timeout while
// another node answered since (see seemsHung). A node that answers other
// requests, or is silent together with every other node (a client or a
// machine too busy to read their answers), is waited for, up to the
// round's limit. Giving a node up makes it unhealthy (see health.gaveUp).
func (rd *round) judge() {
	if !rd.watch.onTime() {
		return
	}
	now := int64(time.Since(rd.r.epoch))
	for i := range rd.n {
		if rd.tallied&(1<<i) != 0 || rd.ended.Load()&(1<<i) != 0 || rd.deferred&(1<<i) != 0 || !rd.seemsHung(i, now) {
			continue
		}
		rd.r.health[i].gaveUp(now, rd.judgeAfter)
		rd.watch.hung |= 1 << i
	}
}

// seemsHung reports whether node i, whose request is still out at now,
// seems hung. Another node answered the round a grace or more ago, which
// shows that the client reads answers. Node i has answered nothing, to
// this round or another, for the round's timeout (without its backoff:
// a give-up backs it off), and for twice as long
// as the round's first answer took and a grace more: nodes that are slow
// together (a link, a loaded server or client) answer within that of each
// other. A node that answers other rounds is no hung node: its socket
// still moves.
func (rd *round) seemsHung(i int, now int64) bool {
	first := rd.firstAnswer
	if first == 0 || now-first < int64(rd.watch.grace) {
		return false // no evidence yet that the client reads answers
	}
	since := rd.since
	if rd.late&(1<<i) != 0 {
		since = rd.lateSince // held back, it was asked only then
	}
	silent := now - max(rd.r.health[i].answered.Load(), since)
	return silent >= int64(rd.judgeAfter) && silent >= 2*(first-rd.since)+int64(rd.watch.grace)
}

// stopTimers stops the round's timers.
func (rd *round) stopTimers() {
	if rd.giveUp != nil {
		rd.giveUp.Stop()
	}
	if rd.hedge != nil {
		rd.r.timers.put(rd.hedge)
		rd.hedge = nil
	}
	rd.watch.stop(&rd.r.timers)
}

// watchman is a round's watch over its nodes past the node timeout: a
// timer that fires at the timeout, then at every grace after it, and the
// nodes it gave up that the round has not tallied yet. Its zero value has
// no timer yet.
type watchman struct {
	t      *time.Timer
	due    time.Time // when t fires
	grace  time.Duration
	streak int    // ticks in a row that came on time
	hung   uint64 // bit i: node i was given up, and is not yet tallied
}

// minGrace is the least time between a watchman's ticks.
const minGrace = 10 * time.Millisecond

// timers keeps a Redlock's watchmen's timers between rounds: most rounds
// end before the node timeout, and a timer each would be two allocations
// each. It is the Redlock's, not global: a timer belongs to the synctest
// bubble it was made in, if any.
type timers struct{ pool sync.Pool }

func (ts *timers) get(d time.Duration) *time.Timer {
	if t, ok := ts.pool.Get().(*time.Timer); ok {
		t.Reset(d)
		return t
	}
	return time.NewTimer(d)
}

// put stops t and keeps it for another round.
func (ts *timers) put(t *time.Timer) {
	t.Stop()
	ts.pool.Put(t)
}

// tick returns the channel of the watchman's timer, started at the node
// timeout if it has not started.
func (w *watchman) tick(ts *timers, timeout time.Duration) <-chan time.Time {
	if w.t == nil {
		w.t = ts.get(timeout)
		w.due = time.Now().Add(timeout)
		w.grace = max(timeout/4, minGrace)
	}
	return w.t.C
}

// onTime sets the timer for the next grace after a tick, and reports
// whether this tick and the one before came on time (within half a
// grace). A tick that came late says that the client had no CPU to run
// on: the answers of live nodes may be waiting to be read, and nobody is
// judged until two ticks in a row came on time.
func (w *watchman) onTime() bool {
	now := time.Now()
	if now.Sub(w.due) <= w.grace/2 {
		w.streak++
	} else {
		w.streak = 0
	}
	w.due = now.Add(w.grace)
	w.t.Reset(w.grace)
	return w.streak >= 2
}

// judged returns a node the watchman gave up that is not tallied yet.
func (w *watchman) judged() (int, bool) {
	if w.hung == 0 {
		return 0, false
	}
	i := bits.TrailingZeros64(w.hung)
	w.hung &^= 1 << i
	return i, true
}

// stop returns the watchman's timer, if any, to ts.
func (w *watchman) stop(ts *timers) {
	if w.t != nil {
		ts.put(w.t)
		w.t = nil
	}
}

// hangsOnHung reports whether the round's verdict hangs on nodes whose
// breakers are open (presumed hung): without their replies, neither a
// quorum of yes nor one of no can be reached.
func (rd *round) hangsOnHung(lose int) bool {
	hung := 0
	for i := range rd.n {
		if rd.tallied&(1<<i) == 0 && rd.deferred&(1<<i) == 0 && rd.r.health[i].open() {
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
		if rd.tallied&(1<<i) == 0 && rd.deferred&(1<<i) == 0 && rd.r.health[i].open() {
			rd.errs = append(rd.errs, &NodeError{Node: n.String(), Err: errPresumedHung})
			rd.failedSet |= 1 << i
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
	return rep.yes || rep.mayLandLate()
}

// mayLandLate reports whether the request got no answer, though it may
// have been sent: the node may still run it, at any time (see "Late SETs"
// in DESIGN.md).
func (rep reply) mayLandLate() bool {
	return rep.err != nil && !rep.unasked && !neverRan(rep.err)
}

// neverRan reports whether err, a node's failure, proves that the node did
// not run the request: the connection was refused, or the node refused the
// client as misconfigured (see misconfigured). Undoing such a request is a
// request for nothing.
func neverRan(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, driver.ErrMisconfigured)
}
