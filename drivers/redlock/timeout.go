package redlock

import (
	"sync/atomic"
	"time"
)

// MaxNodeTimeout bounds the adaptive per-node timeout (see
// [WithNodeTimeout]); it is also the timeout before a node's first answer.
const MaxNodeTimeout = time.Second

// rttEstimate is a node's smoothed round trip and its variation, from the
// requests it answered, as TCP estimates a connection's (RFC 6298). The
// fields are updated without a lock: a lost update of an estimate costs
// nothing.
type rttEstimate struct {
	srtt, rttvar atomic.Int64 // nanoseconds; 0: no answer yet
	backoff      atomic.Int32 // doublings of the timeout since the last answer
}

// maxBackoff bounds rttEstimate.backoff: 32 times the timeout, which the
// ceiling bounds sooner.
const maxBackoff = 5

// add takes the round trip of one answered request into the estimate.
func (e *rttEstimate) add(sample time.Duration) {
	e.backoff.Store(0)
	s := int64(sample)
	srtt := e.srtt.Load()
	if srtt == 0 {
		e.srtt.Store(max(s, 1))
		e.rttvar.Store(s / 2)
		return
	}
	dev := srtt - s
	if dev < 0 {
		dev = -dev
	}
	e.rttvar.Store((3*e.rttvar.Load() + dev) / 4)
	e.srtt.Store(max((7*srtt+s)/8, 1))
}

// timedOut doubles the node's timeout after a request sent at backoff
// level from timed out, as TCP backs off its retransmission timer, until
// the node answers again: a timeout says the estimate was too short (a
// loaded machine, a link that slowed down) or the node is hung, where the
// breaker holds requests back anyway. Requests sent at one level that time
// out together double it once.
func (e *rttEstimate) timedOut(from int32) {
	if from < maxBackoff {
		e.backoff.CompareAndSwap(from, from+1)
	}
}

// timeout is how long a request to the node may take: 3 smoothed round
// trips and 4 variations, or 0 before the node's first answer.
func (e *rttEstimate) timeout() time.Duration {
	srtt := e.srtt.Load()
	if srtt == 0 {
		return 0
	}
	return time.Duration(3*srtt + 4*e.rttvar.Load())
}

// roundTimeout is the timeout of a round's requests: the configured one,
// or, by default, the longest of the nodes' adaptive timeouts, each at
// least DefaultNodeTimeout and doubled for each timeout since the node's
// last answer, and at most MaxNodeTimeout or, for an acquisition or
// extension of ttl, a quarter of ttl (a round eats into the lock's
// validity). Nodes that never answered are left out, unless none has
// answered yet: then it is the most. (A node dead since the start must not
// keep every request to it waiting the longest: at full speed that would
// be thousands of requests in flight.) The round decides at a quorum's
// verdict, so a long timeout for one node delays nothing while the others
// answer.
func (r *Redlock) roundTimeout(ttl time.Duration) time.Duration {
	return r.timeout(ttl, true)
}

// patience is how long a round waits for nodes presumed hung (their
// breakers are open) when its verdict hangs on them: its timeout without
// the backoff (see roundTimeout). Their probes still get the whole
// timeout, so that a node that slowed down can answer and close its
// breaker, but a majority that hangs fails a round about as fast as it
// would on its first timeout, without the doublings.
func (r *Redlock) patience(ttl time.Duration) time.Duration {
	return r.timeout(ttl, false)
}

// timeout is roundTimeout, with or without the backoff.
func (r *Redlock) timeout(ttl time.Duration, backoff bool) time.Duration {
	if r.cfg.nodeTimeout > 0 {
		return r.cfg.nodeTimeout
	}
	ceiling := MaxNodeTimeout
	if ttl > 0 {
		ceiling = max(min(ceiling, ttl/4), DefaultNodeTimeout)
	}
	var t time.Duration
	for i := range r.rtt {
		e := &r.rtt[i]
		if est := e.timeout(); est > 0 {
			est = max(est, DefaultNodeTimeout)
			if backoff {
				est <<= e.backoff.Load()
			}
			t = max(t, est)
		}
	}
	if t == 0 {
		return ceiling
	}
	return min(t, ceiling)
}
