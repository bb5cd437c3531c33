package redlock

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// breakAfter is how many timeouts in a row open a node's breaker.
const breakAfter = 3

// maxSilentInflight is how many requests may wait on a node that has
// been silent (see silence): more are not sent.
const maxSilentInflight = 16

// minSilence is the least silence that makes a node suspect: below it, a
// healthy node on a loaded machine is often silent for as long.
const minSilence = 2 * time.Millisecond

// silence is how long a node with requests out may go without answering
// before it is suspect: twice its own expected longest round trip (3
// smoothed round trips and 4 variations, from its answers), at least
// minSilence, at most half the round's timeout. At full speed a node that
// hangs would otherwise collect a request per operation until half a
// timeout had passed (about 100 at 4,000 operations a second and a 50ms
// timeout).
func silence(e *rttEstimate, timeout time.Duration) time.Duration {
	return min(timeout/2, max(minSilence, 2*e.timeout()))
}

// errNodeHung is the error of a request not sent to a node that seems
// hung.
var errNodeHung = errors.New("not asked: it stopped answering (one request at a time probes it)")

// errPresumedHung is the error of a node that a round did not wait for:
// its breaker is open, and it did not answer within the round's patience.
var errPresumedHung = errors.New("not waited for: it stopped answering (its probe goes on)")

// A breaker keeps the requests to a hung node from piling up, each on a
// goroutine that waits out the timeout:
//   - while a node that has requests out has been silent (see silence),
//     at most maxSilentInflight requests wait on it; the others are
//     answered at once with errNodeHung;
//   - after breakAfter timeouts in a row it opens: then one request at a
//     time goes to the node, as a probe, and the others are answered with
//     errNodeHung.
//
// Any answer closes it again, so a node that comes back is asked by the
// next round. Refused connections (a dead node's) fail at once, cost
// nothing, and do not open it. A node that answers, however slowly, is
// never held back.
type breaker struct {
	timeouts atomic.Int32 // in a row
	probing  atomic.Bool  // a request is out to the open node
	inflight atomic.Int32 // requests out
	answered atomic.Int64 // when the node last answered, in ns after the Redlock's epoch
	busyFrom atomic.Int64 // when its requests out went from none to one: silence counts from the later of the two
}

// admit reports whether a request may go to the node at now (ns after
// the epoch), when a silence of silent makes it suspect, and whether it is
// the probe of an open breaker (to be passed to done).
func (b *breaker) admit(now int64, silent time.Duration) (ok, probe bool) {
	if b.open() {
		if !b.probing.CompareAndSwap(false, true) {
			return false, false
		}
		probe = true
	}
	// Counted in first, so that requests admitted at once cannot overshoot
	// the bound.
	switch n := b.inflight.Add(1); {
	case n == 1:
		b.busyFrom.Store(now) // a burst after a quiet spell is not silence
	case !probe && n > maxSilentInflight && now-max(b.answered.Load(), b.busyFrom.Load()) > int64(silent):
		b.inflight.Add(-1)
		return false, false
	}
	return true, probe
}

// open reports whether the breaker is open: the node is presumed hung.
func (b *breaker) open() bool { return b.timeouts.Load() >= breakAfter }

// timedOut reports whether err, of a request sent under nctx, is the
// request running out of time (see IsTimeout) rather than the round or its
// caller giving up on it. The context's own timer may not have fired yet
// when the socket's has, so nctx.Err() can still be nil.
func timedOut(nctx context.Context, err error) bool {
	return !errors.Is(nctx.Err(), context.Canceled) && IsTimeout(err)
}

// IsTimeout reports whether err is a Node's report of a request that ran
// out of its context's deadline, as [Node] requires: context.DeadlineExceeded,
// or an error with a Timeout method that returns true, such as the
// socket's "i/o timeout" that go-redis and redigo return (they bound a
// command by its connection's deadline).
func IsTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &t) && t.Timeout()
}

// done records the outcome of an admitted request, sent under nctx,
// ended at now, and reports whether it timed out.
func (b *breaker) done(nctx context.Context, now int64, probe bool, err error) (timeout bool) {
	b.inflight.Add(-1)
	switch {
	case err == nil:
		b.timeouts.Store(0)
		b.answered.Store(now)
	case timedOut(nctx, err):
		b.timeouts.Add(1)
		timeout = true
	}
	if probe {
		b.probing.Store(false)
	}
	return timeout
}
