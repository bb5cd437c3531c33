package lock

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distlock/lock/driver"
)

// queues holds a client's queues of waiting Acquire calls, by key. Its
// zero value has none.
type queues struct {
	mu sync.Mutex // guards m, the queues' refs, offer and streak, and the handovers' states
	m  map[string]*queue
	n  atomic.Int32 // len(m), read without mu on the paths of uncontended locks
}

// A queue lines up one client's Acquire calls waiting for one key. Only
// one of them at a time, the holder of the queue's turn, tries the backend
// and listens for releases. The others wait for the turn. Without a queue,
// every release would wake every waiting call of the client. All of them
// would race each other, and the other clients, for the key. With a quorum
// backend, such a race can split the votes so that nobody wins.
//
// The turn passes in arrival order, when its holder acquires the key or
// gives up. The value passed says which, so that the next holder, knowing
// that the key is held by its own client, waits for that lock's Release
// (which this client sees at once) instead of trying first.
type queue struct {
	turn     chan bool     // holds the turn while no call does: true if its last holder took the key
	released chan struct{} // signalled, without blocking, when a lock of this client on the key is released
	refs     int           // calls in the queue
	offer    *handover     // the turn holder's offer to take over the key's lock; nil if none
	streak   time.Time     // when the first lock of the current run of handovers was acquired; zero if none
}

// join adds a call to key's queue, making the queue if need be. Each join
// is undone by one leave.
func (qs *queues) join(key string) *queue {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	q := qs.m[key]
	if q == nil {
		if qs.m == nil {
			qs.m = make(map[string]*queue)
		}
		q = &queue{turn: make(chan bool, 1), released: make(chan struct{}, 1)}
		q.turn <- false
		qs.m[key] = q
		qs.n.Add(1)
	}
	q.refs++
	return q
}

// joinWaiting adds a call to key's queue if other calls wait in it, and
// returns nil if none do.
func (qs *queues) joinWaiting(key string) *queue {
	if qs.n.Load() == 0 {
		return nil // nobody waits for any key: spare the lock
	}
	qs.mu.Lock()
	defer qs.mu.Unlock()
	q := qs.m[key]
	if q != nil {
		q.refs++
	}
	return q
}

// leave undoes one join or joinWaiting.
func (qs *queues) leave(key string, q *queue) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if q.refs--; q.refs == 0 {
		delete(qs.m, key)
		qs.n.Add(-1)
	}
}

// released tells the calls waiting for key that a lock of this client on
// key was released. It does not tell them if their queue is quiet (nil for
// none), because the holder of that queue's turn is the caller, which
// knows. released also ends key's run of handovers.
func (qs *queues) released(key string, quiet *queue) {
	if qs.n.Load() == 0 {
		return
	}
	qs.mu.Lock()
	q := qs.m[key]
	if q != nil {
		q.streak = time.Time{}
	}
	qs.mu.Unlock()
	if q != nil && q != quiet {
		driver.Signal(q.released)
	}
}

// handoverWindow bounds a run of handovers on one key. Once a run has gone
// on for this long, the next lock is released as usual. The other clients
// waiting for the key then get their chance, at worst this much later than
// they would without handovers. Handovers matter for short holds, where a
// round trip is a large share of a handoff. A hold longer than the window
// is always released as usual.
const handoverWindow = 20 * time.Millisecond

// A handover is the offer of the call holding a queue's turn to take over
// the lock that holds its key when that lock is released, with a
// driver.Transferer. [Lock.Release] then transfers the lease to the call
// in one step instead of releasing it.
type handover struct {
	qs     *queues
	q      *queue
	ttl    time.Duration // the waiting call's TTL
	drift  float64       // and drift factor
	tag    string        // and value's tag (see options)
	state  handoverState // guarded by qs.mu
	result chan *Lock    // the lock handed over, or nil if the handover failed
}

type handoverState int

const (
	offered   handoverState = iota // waiting for a Release
	claimed                        // a Release is handing the lock over
	delivered                      // the result is in result
	withdrawn                      // the waiting call stopped waiting before a claim
	abandoned                      // the waiting call stopped waiting after a claim
)

// offer makes the holder of q's turn, waiting with options o, the taker of
// the next handover of q's key.
func (qs *queues) offer(q *queue, o *options) *handover {
	h := &handover{qs: qs, q: q, ttl: o.ttl, drift: o.drift, tag: o.tag, result: make(chan *Lock, 1)}
	qs.mu.Lock()
	q.offer = h
	qs.mu.Unlock()
	return h
}

// claim returns the handover offered for key, claimed for the Release of a
// lock of this client acquired at since, or nil if there is none, or if
// the run of handovers on key (which began when its first lock was
// acquired) began handoverWindow ago or more.
func (qs *queues) claim(key string, since time.Time) *handover {
	if qs.n.Load() == 0 {
		return nil
	}
	qs.mu.Lock()
	defer qs.mu.Unlock()
	q := qs.m[key]
	if q == nil || q.offer == nil {
		return nil
	}
	if q.streak.IsZero() {
		q.streak = since
	}
	if time.Since(q.streak) >= handoverWindow {
		q.streak = time.Time{}
		return nil
	}
	h := q.offer
	q.offer = nil
	h.state = claimed
	return h
}

// withdraw takes back h. It returns false if a Release claimed it, whose
// result comes on h.result.
func (h *handover) withdraw() bool {
	h.qs.mu.Lock()
	defer h.qs.mu.Unlock()
	if h.state != offered {
		return false
	}
	h.state = withdrawn
	if h.q.offer == h {
		h.q.offer = nil
	}
	return true
}

// abandon gives up a claimed handover, whose Release then gives the key
// back. It returns false if the result is in already.
func (h *handover) abandon() bool {
	h.qs.mu.Lock()
	defer h.qs.mu.Unlock()
	if h.state != claimed {
		return false
	}
	h.state = abandoned
	return true
}

// deliver completes the claimed handover h with l, nil if it failed. It
// returns false if the waiting call abandoned h.
func (h *handover) deliver(l *Lock) bool {
	h.qs.mu.Lock()
	defer h.qs.mu.Unlock()
	if h.state == abandoned {
		return false
	}
	h.state = delivered
	h.result <- l
	return true
}

// A wait is one Acquire call's wait for its key. It owns the call's place
// in the key's queue, its subscription to releases, its offer to take over
// a released lock of its client, and the bookkeeping that paces its
// retries. Client.acquire makes the attempts. The wait says when to make
// the next one, and whether a failed one ends the call.
type wait struct {
	qs     *queues
	key    string
	o      options         // the call's (a copy, so that the caller's stays on its stack)
	waiter driver.Waiter   // nil if the driver does not announce releases
	offers bool            // the driver transfers leases: offer to take over the key's lock
	closed <-chan struct{} // closed when the client closes
	log    *slog.Logger

	place place
	pace  pace
	q     *queue       // the key's queue, unless arriving or outside
	watch driver.Watch // the subscription to releases, once made

	attempts     int       // attempts made, or counted while waiting for the turn
	last         error     // the cause of the last failed attempt that the context did not end
	woken        bool      // the last pause ended at a release, or at a handover that failed
	failures     int       // attempts in a row, since a wake-up, that the backend failed
	unsubscribed int       // subscriptions to releases in a row that failed
	down         time.Time // when the current run of attempts that could not reach the backend began; zero if none
}

// place is where a waiting call stands.
type place int

const (
	arriving place = iota // it has made no attempt yet
	outside               // not in the queue: its attempts failed on the backend, and none found the key held
	queued                // in the queue, waiting for the turn
	first                 // it holds the turn: the one call of the client trying the backend for the key
)

// pace says when a waiting call makes its next attempt.
type pace int

const (
	atOnce     pace = iota // the key may be free
	afterPause             // after the strategy's delay, a release or a handover, whichever comes first
)

// newWait returns the wait of a call acquiring key with options o. The
// driver announces releases through w (nil if it does not), and can
// transfer leases if offers is set. closed is closed when the client
// closes.
func (qs *queues) newWait(key string, o *options, w driver.Waiter, offers bool, closed <-chan struct{}, log *slog.Logger) *wait {
	return &wait{qs: qs, key: key, o: *o, waiter: w, offers: offers, closed: closed, log: log}
}

// next returns when it is the call's time to make its next attempt.
// failure is the error of the last attempt, nil before the first. The
// first attempt comes at once, unless other calls of its client wait for
// the key. The call then queues behind them. Later attempts come as the
// pace of its retries says. next returns the lock a Release handed over
// to the call meanwhile, if any, or Acquire's error if the call gives up.
func (w *wait) next(ctx context.Context, failure error) (*Lock, error) {
	if failure != nil {
		if err := w.failed(ctx, failure); err != nil {
			return nil, err
		}
	}
	if w.place == arriving {
		w.place = outside
		if w.q = w.qs.joinWaiting(w.key); w.q != nil {
			w.last = opError("acquire", w.key, ErrNotAcquired)
			w.attempts = 1
			if err := w.awaitTurn(ctx); err != nil {
				return nil, err
			}
		}
	}
	if w.pace == atOnce {
		return nil, nil
	}
	return w.pause(ctx)
}

// failed takes the error of the call's last attempt. It returns nil if the
// call goes on, and Acquire's error if it gives up.
func (w *wait) failed(ctx context.Context, err error) error {
	w.attempts++
	if ctx.Err() != nil {
		return gaveUp(ctx, w.key, cmp.Or(w.last, err))
	}
	w.last = err
	switch {
	case errors.Is(err, ErrMisconfigured):
		return err // retrying cannot help
	case w.unreachableTooLong(err):
		return opError("acquire", w.key, fmt.Errorf("the backend was unreachable for %v: %w", MaxUnavailable, unwrapOp(err)))
	}
	if _, again := w.o.retry.Delay(w.attempts); !again {
		return err
	}
	w.pace = afterPause
	if !errors.Is(err, ErrNotAcquired) {
		// The backend failed. If this attempt answered a release, try again
		// soon, because nothing will announce that release again.
		if w.woken || w.failures > 0 {
			w.failures++
		}
		return nil
	}
	w.failures = 0
	if w.place == outside {
		w.q = w.qs.join(w.key)
		select {
		case <-w.q.turn: // nobody else waits: go on at once
			w.place = first
		default:
			return w.awaitTurn(ctx) // subscribe after the next refusal
		}
	}
	w.subscribe(ctx)
	return nil
}

// unreachableTooLong takes the failure err of an attempt and reports
// whether every attempt since the first of a run of failures to reach
// the backend failed that way, for MaxUnavailable or longer.
func (w *wait) unreachableTooLong(err error) bool {
	if !errors.Is(err, ErrUnavailable) {
		w.down = time.Time{}
		return false
	}
	if w.down.IsZero() {
		w.down = time.Now()
	}
	return time.Since(w.down) >= MaxUnavailable
}

// unwrapOp returns the cause of err if it is an *Error, err otherwise.
func unwrapOp(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e.Err
	}
	return err
}

// awaitTurn waits in the queue for the turn, giving up when ctx is done or
// the retry strategy would have given up by then. It counts the attempts
// the turn's holder makes meanwhile as this call's own. With the turn, the
// call tries at once, unless the turn's last holder took the key. In that
// case the call waits for that lock's release.
func (w *wait) awaitTurn(ctx context.Context) error {
	w.place = queued
	for {
		delay, again := w.o.retry.Delay(w.attempts)
		if !again {
			return w.last
		}
		timer := time.NewTimer(max(delay, 0))
		select {
		case taken := <-w.q.turn:
			timer.Stop()
			w.place, w.pace = first, atOnce
			if taken {
				w.pace = afterPause
			}
			return nil
		case <-ctx.Done():
			timer.Stop()
			return gaveUp(ctx, w.key, w.last)
		case <-w.closed:
			timer.Stop()
			return opError("acquire", w.key, ErrClosed)
		case <-timer.C:
			w.attempts++
		}
	}
}

// subscribe subscribes the call to releases of its key, if the driver
// announces them and the call has not yet. Once subscribed, the call tries
// again at once. A release between its refused attempt and the
// subscription would otherwise go unheard.
func (w *wait) subscribe(ctx context.Context) {
	if w.watch != nil || w.waiter == nil {
		return
	}
	watch, err := w.waiter.Watch(ctx, w.key)
	if err != nil {
		// Try again soon rather than at the strategy's pace, which may be
		// slow where releases are announced. Back off while it fails.
		w.log.DebugContext(ctx, "lock: watch failed; trying again", "key", w.key, "err", err)
		w.unsubscribed++
		return
	}
	w.watch, w.unsubscribed, w.pace = watch, 0, atOnce
}

// pause waits for the strategy's delay before the call's next attempt. A
// release of the key cuts the wait short. So does a handover, while the
// call holds the turn on a driver that transfers leases.
func (w *wait) pause(ctx context.Context) (*Lock, error) {
	d, _ := w.o.retry.Delay(w.attempts)
	if n := max(w.failures, w.unsubscribed); n > 0 {
		d = min(d, wokenRetryDelay(n))
	}
	timer := time.NewTimer(max(d, 0))
	defer timer.Stop()
	if w.place == first && w.offers {
		return w.sleepOffering(ctx, timer.C)
	}
	select {
	case <-ctx.Done():
		return nil, gaveUp(ctx, w.key, w.last)
	case <-w.closed:
		return nil, opError("acquire", w.key, ErrClosed)
	case <-timer.C:
		w.woken = false
	case <-w.announced():
		w.woken = true
	case <-w.localReleases():
		w.woken = true
	}
	return nil, nil
}

// wokenRetryDelay bounds the wait before the next attempt in two cases.
// One is after n attempts in a row that the backend failed, the first of
// them made at a release's announcement. The other is after n failed
// subscriptions to releases. The bound is 10ms, doubling with each
// failure. A connection that broke while the waiter slept (a server
// restart, say) fails the first attempt after it. The release that woke
// the waiter will not be announced again. A waiter whose subscription
// failed hears of no release at all. The strategy's delay is meant for a
// key found held, and is often long where releases are announced. Waiting
// that long could leave a free key waiting.
func wokenRetryDelay(n int) time.Duration {
	return 10 * time.Millisecond << min(n-1, 16)
}

// announced is where the backend announces releases of the key to the
// call, nil (never ready) if it does not.
func (w *wait) announced() <-chan struct{} {
	if w.watch == nil {
		return nil
	}
	return w.watch.Released()
}

// localReleases is where the client signals releases of its own locks on
// the key to the call holding the turn, nil (never ready) for other calls.
func (w *wait) localReleases() <-chan struct{} {
	if w.place != first {
		return nil
	}
	return w.q.released
}

// sleepOffering is pause for the holder of the turn on a driver that
// transfers leases. Until the timer fires, it also offers to take over
// the key's lock if this client holds it and releases it.
func (w *wait) sleepOffering(ctx context.Context, timer <-chan time.Time) (*Lock, error) {
	h := w.qs.offer(w.q, &w.o)
	woken := false
	select {
	case l := <-h.result:
		w.woken = l == nil
		return l, nil
	case <-ctx.Done():
	case <-w.closed:
	case <-timer:
	case <-w.announced():
		woken = true
	case <-w.q.released:
		woken = true
	}
	if !h.withdraw() {
		// A Release is handing its lock over, even if the client is
		// closing. Close waits for that Release, which then gives the key
		// back.
		return w.awaitHandover(ctx, h)
	}
	if ctx.Err() != nil {
		return nil, gaveUp(ctx, w.key, w.last)
	}
	select {
	case <-w.closed:
		return nil, opError("acquire", w.key, ErrClosed)
	default:
	}
	w.woken = woken
	return nil, nil
}

// awaitHandover waits for the result of the claimed handover h. If ctx
// ends first, it abandons h (the Release then gives the key back) unless
// the result is in.
func (w *wait) awaitHandover(ctx context.Context, h *handover) (*Lock, error) {
	select {
	case l := <-h.result:
		w.woken = l == nil
		return l, nil
	case <-ctx.Done():
		if !h.abandon() {
			if l := <-h.result; l != nil {
				return l, nil
			}
		}
		return nil, gaveUp(ctx, w.key, w.last)
	}
}

// turn returns the key's queue if the call holds its turn, and nil if not.
func (w *wait) turn() *queue {
	if w.place != first {
		return nil
	}
	return w.q
}

// end takes the call out of the key's queue once Acquire returns l (nil if
// it failed). The holder of the turn passes it on, saying whether it took
// the key. If it did, releases signalled so far were of earlier locks, and
// the next holder waits for l's.
func (w *wait) end(l *Lock) {
	if w.watch != nil {
		// Close the watch in the background. A driver may take its time to
		// unsubscribe (from a hung node, say), and the lock is the
		// caller's now.
		go w.watch.Close()
	}
	if w.place == first {
		if l != nil {
			select {
			case <-w.q.released:
			default:
			}
		}
		w.q.turn <- l != nil
	}
	if w.q != nil {
		w.qs.leave(w.key, w.q)
	}
}

// gaveUp is the error of an Acquire whose context ended while it waited.
// It matches both the context's error and last, the cause of the last
// attempt.
func gaveUp(ctx context.Context, key string, last error) error {
	last = unwrapOp(last)
	if cause := context.Cause(ctx); cause != ctx.Err() {
		return opError("acquire", key, fmt.Errorf("%w: %w (last attempt: %w)", ctx.Err(), cause, last))
	}
	return opError("acquire", key, fmt.Errorf("%w (last attempt: %w)", ctx.Err(), last))
}
