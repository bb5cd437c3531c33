package redlock

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"
)

// MaxNodeTimeout bounds the adaptive per-node timeout (see
// [WithNodeTimeout]). It is also the timeout before a node's first answer.
const MaxNodeTimeout = time.Second

// breakAfter is how many timeouts in a row open a node's breaker.
const breakAfter = 3

// maxSilentInflight is how many requests may wait on a node that has
// been silent (see health.silence). More are not sent.
const maxSilentInflight = 16

// minSilence is the least silence that makes a node suspect. Below it, a
// healthy node on a loaded machine is often silent for as long: with 16
// goroutines at full speed beside five servers on two cores, healthy
// nodes went silent for 5-8ms with 90-99 requests out, and 40ms with 446
// (redigo, which dials a connection per request out, 2026-12-07). At 2ms,
// as it was, such silences refused 4,000-5,000 requests in 40s and failed
// 6 operations in one of two runs (3 nodes refused at once); at 20ms,
// 1,200-1,700 and none, in two runs.
const minSilence = 20 * time.Millisecond

// minHedge is the least time a round that asked a quorum first waits for
// it before it asks the other nodes (see Redlock.hedgeDelay).
const minHedge = 2 * time.Millisecond

// maxBackoff bounds health.backoff: 32 times the timeout, which the
// ceiling bounds sooner.
const maxBackoff = 5

// errNodeHung is the error of a request not sent to a node that seems
// hung.
var errNodeHung = errors.New("not asked: it stopped answering (one request at a time probes it)")

// errGaveUp is the error of a node that a round gave up as hung: it
// answered nothing for the node timeout while other nodes answered. It
// matches context.DeadlineExceeded, as a timeout.
var errGaveUp = fmt.Errorf("given up: no answer within the node timeout, while other nodes answered: %w", context.DeadlineExceeded)

// errPresumedHung is the error of a node that a round did not wait for.
// Its breaker is open, and it did not answer within the round's patience.
var errPresumedHung = errors.New("not waited for: it stopped answering (its probe goes on)")

// health is what a Redlock knows of one node: its breaker, and the round
// trips that set its adaptive timeout and the timeout's backoff. It is
// safe for concurrent use. The fields change without a lock: a lost
// update of an estimate costs nothing.
//
// The breaker keeps the requests to a hung node from piling up, each on
// a goroutine that waits out the timeout. While a node with requests out
// has been silent (see silence), at most maxSilentInflight requests wait
// on it. After breakAfter timeouts in a row it opens, and one request at
// a time goes to the node, as a probe. Other requests are not sent, and
// get errNodeHung. Any answer closes it, so a node that comes back is
// asked by the next round. Refused connections (a dead node's) fail at
// once, cost nothing, and do not open it.
//
// The round trips are estimated as TCP estimates a connection's (RFC
// 6298). Only answers are samples. A timeout doubles the node's timeout
// instead, until it answers again, as TCP backs off its retransmission
// timer.
type health struct {
	timeouts atomic.Int32 // in a row
	gaveUps  atomic.Int32 // silences in a row that rounds gave the node up for (see gaveUp)
	probing  atomic.Bool  // a request is out to the open node
	inflight atomic.Int32 // requests out
	answered atomic.Int64 // when the node last answered, in ns after the Redlock's epoch
	busyFrom atomic.Int64 // when its requests out went from none to one; silence counts from the later of the two
	gaveUpAt atomic.Int64 // when a round last counted giving the node up (see gaveUp)

	srtt, rttvar atomic.Int64 // smoothed round trip and its variation, in ns; 0 before the first answer
	backoff      atomic.Int32 // doublings of the timeout since the last answer
}

// newHealth returns the health of n nodes that have not answered yet.
func newHealth(n int) []health {
	hs := make([]health, n)
	for i := range hs {
		hs[i].answered.Store(math.MinInt64 / 2) // silent until it answers
		hs[i].gaveUpAt.Store(math.MinInt64 / 2)
	}
	return hs
}

// A request is one request admitted to a node, from begin to end.
type request struct {
	start   int64 // when it was sent, in ns after the epoch
	probe   bool  // the open breaker's probe
	backoff int32 // the timeout's backoff when it was sent
}

// begin admits a request to the node, sent under a round's timeout, or
// reports false if the breaker holds it back. The clock counts from
// epoch.
func (h *health) begin(epoch time.Time, timeout time.Duration) (request, bool) {
	start := int64(time.Since(epoch)) // one monotonic clock read: time.Now reads two clocks, and was 8% of the rounds' own CPU
	ok, probe := h.admit(start, h.silence(timeout))
	if !ok {
		return request{}, false
	}
	return request{start: start, probe: probe, backoff: h.backoff.Load()}, true
}

// end records how req, sent under nctx, ended: an answer is a round trip
// to learn from, and a timeout backs the node's timeout off (once per
// backoff level: a round that gave the request up, see round.judge, may
// have backed it off already).
func (h *health) end(epoch time.Time, nctx context.Context, req request, err error) {
	now := int64(time.Since(epoch))
	timeout := h.done(nctx, now, req.probe, err)
	switch {
	case err == nil:
		h.add(time.Duration(now - req.start))
	case timeout:
		h.backOff(req.backoff)
	}
}

// gaveUp records that a round gave the node up as hung at now (ns after
// the epoch; see round.judge), before its request ends: once per timeout
// of silence, since every round with a request out to a silent node gives
// it up at about the same moment. The node is no longer healthy, and its
// timeout backs off; but only its requests' own timeouts, at their
// round's limit, open its breaker. A node that a loaded machine left
// silent for a few timeouts is not shut out: before this, counted as
// timeouts, such silences opened breakers on healthy nodes beside 16
// goroutines, and operations failed for want of them.
func (h *health) gaveUp(now int64, timeout time.Duration) {
	last := h.gaveUpAt.Load()
	if now-last < int64(timeout) || !h.gaveUpAt.CompareAndSwap(last, now) {
		return
	}
	h.gaveUps.Add(1)
	h.backOff(h.backoff.Load())
}

// healthy reports whether the node has answered since its last timeout.
func (h *health) healthy() bool { return h.timeouts.Load() == 0 && h.gaveUps.Load() == 0 }

// open reports whether the breaker is open: the node is presumed hung.
func (h *health) open() bool { return h.timeouts.Load() >= breakAfter }

// admit reports whether a request may go to the node at now (ns after
// the epoch), when a silence of silent makes it suspect. It also reports
// whether the request is the open breaker's probe, for done.
func (h *health) admit(now int64, silent time.Duration) (ok, probe bool) {
	if h.open() {
		if !h.probing.CompareAndSwap(false, true) {
			return false, false
		}
		probe = true
	}
	// Counted in first, so that requests admitted at once cannot overshoot
	// the bound.
	switch n := h.inflight.Add(1); {
	case n == 1:
		h.busyFrom.Store(now) // a burst after a quiet spell is not silence
	case !probe && n > maxSilentInflight && now-max(h.answered.Load(), h.busyFrom.Load()) > int64(silent):
		h.inflight.Add(-1)
		return false, false
	}
	return true, probe
}

// done counts out an admitted request, sent under nctx and ended at now.
// It reports whether the request timed out.
func (h *health) done(nctx context.Context, now int64, probe bool, err error) (timeout bool) {
	h.inflight.Add(-1)
	switch {
	case err == nil:
		h.timeouts.Store(0)
		h.gaveUps.Store(0)
		h.answered.Store(now)
	case timedOut(nctx, err):
		h.timeouts.Add(1)
		timeout = true
	}
	if probe {
		h.probing.Store(false)
	}
	return timeout
}

// silence is how long the node may go without answering while it has
// requests out, before it is suspect. It is twice the node's own
// expected longest round trip, at least minSilence, at most half the
// round's timeout. Without it, a node that hangs at full speed would
// collect a request per operation until half a timeout had passed.
func (h *health) silence(timeout time.Duration) time.Duration {
	return min(timeout/2, max(minSilence, 2*h.estimate()))
}

// add takes the round trip of one answered request into the estimate,
// and ends the backoff.
func (h *health) add(sample time.Duration) {
	h.backoff.Store(0)
	s := int64(sample)
	srtt := h.srtt.Load()
	if srtt == 0 {
		h.srtt.Store(max(s, 1))
		h.rttvar.Store(s / 2)
		return
	}
	dev := srtt - s
	if dev < 0 {
		dev = -dev
	}
	h.rttvar.Store((3*h.rttvar.Load() + dev) / 4)
	h.srtt.Store(max((7*srtt+s)/8, 1))
}

// backOff doubles the node's timeout after a request sent at backoff
// level from timed out. A timeout says the estimate was too short (a
// loaded machine, a slower link) or the node is hung, where the breaker
// holds requests back anyway. Requests sent at one level that time out
// together double it once.
func (h *health) backOff(from int32) {
	if from < maxBackoff {
		h.backoff.CompareAndSwap(from, from+1)
	}
}

// estimate is how long a request to the node may take: 3 smoothed round
// trips and 4 variations, or 0 before the node's first answer.
func (h *health) estimate() time.Duration {
	srtt := h.srtt.Load()
	if srtt == 0 {
		return 0
	}
	return time.Duration(3*srtt + 4*h.rttvar.Load())
}

// timedOut reports whether err, of a request sent under nctx, is the
// request running out of time (see IsTimeout). A round or caller that
// gave up on it is no timeout. The socket's timer may fire before the
// context's, so nctx.Err() can still be nil.
func timedOut(nctx context.Context, err error) bool {
	return !errors.Is(nctx.Err(), context.Canceled) && IsTimeout(err)
}

// IsTimeout reports whether err is a Node's report of a request that ran
// out of its context's deadline, as [Node] requires. That is
// context.DeadlineExceeded, or an error with a Timeout method that returns
// true, such as the socket's "i/o timeout" that go-redis and redigo return
// (they bound a command by its connection's deadline).
func IsTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &t) && t.Timeout()
}

// errStalled stands, for a node's health, for a request that timed out
// while no other node answered either (see Redlock.othersAnswered): no
// timeout of the node's own.
var errStalled = errors.New("every node was silent: the client stalled")

// othersAnswered reports whether a node other than i answered since
// since (ns after the epoch).
func (r *Redlock) othersAnswered(i int, since int64) bool {
	for j := range r.health {
		if j != i && r.health[j].answered.Load() > since {
			return true
		}
	}
	return false
}

// hedgeDelay is how long a round that asked the nodes in mask, and held
// the others back, waits for their verdict before it asks the others: the
// longest round trip expected of them (see health.estimate), at least
// minHedge, at most half of timeout.
func (r *Redlock) hedgeDelay(mask uint64, timeout time.Duration) time.Duration {
	d := minHedge
	for i := range r.health {
		if mask&(1<<i) != 0 {
			d = max(d, r.health[i].estimate())
		}
	}
	return min(d, timeout/2)
}

// unhealthy returns the nodes that are not healthy (see healthy).
func (r *Redlock) unhealthy() uint64 {
	var m uint64
	for i := range r.health {
		if !r.health[i].healthy() {
			m |= 1 << i
		}
	}
	return m
}

// healthy reports whether node i has answered since its last timeout.
func (r *Redlock) healthy(i int) bool { return r.health[i].healthy() }

// degraded reports whether a node timed out since its last answer.
func (r *Redlock) degraded() bool {
	for i := range r.health {
		if !r.health[i].healthy() {
			return true
		}
	}
	return false
}

// roundTimeout is the timeout of a round's requests. It is the configured
// one or, by default, the longest of the nodes' adaptive timeouts, each
// at least DefaultNodeTimeout and doubled for each timeout since the
// node's last answer. It is at most MaxNodeTimeout and, for an
// acquisition or extension of ttl, a quarter of ttl, since a round eats
// into the lock's validity. Nodes that never answered are left out, unless
// none has: then it is the most. (A node dead since the start must not
// keep every request to it waiting the longest.) A round decides at a
// quorum's verdict, so one slow node's long timeout delays nothing.
func (r *Redlock) roundTimeout(ttl time.Duration) time.Duration {
	return r.timeout(ttl, true)
}

// maxPatience bounds Redlock.patience. A round waits for nodes slow
// together up to its limit, so on a saturated machine the estimates learn
// round trips of hundreds of milliseconds; a node whose breaker is open has
// answered nothing for three timeouts in a row, and waiting that long for
// it again would make a hung majority cost every round as much.
const maxPatience = 2 * DefaultNodeTimeout

// patience is how long a round waits for nodes presumed hung (their
// breakers are open) when its verdict hangs on them. It is the round's
// timeout without the backoff, at most maxPatience. Their probes still get
// the whole timeout and the round's limit, so that a node that slowed down
// can answer and close its breaker. A hung majority fails a round about as
// fast as on its first timeout.
func (r *Redlock) patience(ttl time.Duration) time.Duration {
	return min(r.timeout(ttl, false), max(maxPatience, r.cfg.nodeTimeout))
}

// limit is how long the requests of a round of several nodes, for ttl
// and with timeout (the round's), may take: at least the timeout, and up
// to the adaptive timeout's ceiling. Past the timeout, a node that seems
// hung is given up (see round.judge); a node that is only slow, with the
// others (a client or machine too busy to read their answers), is waited
// for up to the limit. A round decides at the quorum's verdict, so that
// costs nothing where a quorum answers within the timeout.
func (r *Redlock) limit(ttl, timeout time.Duration) time.Duration {
	return max(timeout, ceiling(ttl))
}

// ceiling bounds the adaptive timeout of a round for ttl: MaxNodeTimeout
// and, for an acquisition or extension, a quarter of its TTL, but at
// least DefaultNodeTimeout.
func ceiling(ttl time.Duration) time.Duration {
	if ttl > 0 {
		return max(min(MaxNodeTimeout, ttl/4), DefaultNodeTimeout)
	}
	return MaxNodeTimeout
}

// timeout is roundTimeout, with or without the backoff.
func (r *Redlock) timeout(ttl time.Duration, backoff bool) time.Duration {
	if r.cfg.nodeTimeout > 0 {
		return r.cfg.nodeTimeout
	}
	ceiling := ceiling(ttl)
	var t time.Duration
	for i := range r.health {
		h := &r.health[i]
		if est := h.estimate(); est > 0 {
			est = max(est, DefaultNodeTimeout)
			if backoff {
				est <<= h.backoff.Load()
			}
			t = max(t, est)
		}
	}
	if t == 0 {
		return ceiling
	}
	return min(t, ceiling)
}
