package lock

import (
	"context"
	"time"

	"github.com/distlock/lock/driver"
)

// A turn queues one client's waiting Acquire calls for one key, so that
// only one of them at a time (the one holding the turn) tries the backend
// and listens for releases; the others wait for the turn. Without it, every
// release would wake every waiter of the client, and all of them would
// race each other, and the other clients, for the key: with a quorum
// backend, such a race can split the votes so that nobody wins.
//
// The turn passes in arrival order. It passes when its holder acquires the
// key or gives up; the value passed says which, so that the next holder,
// knowing the key is held by its own client, waits for that lock's Release
// (which this client sees at once) instead of trying first.
type turn struct {
	// token holds the turn when nobody does. Its value is true if the
	// last holder acquired the key.
	token chan bool
	// released is signalled, without blocking, when a lock of this
	// client on the key is released.
	released chan struct{}
	refs     int // waiters using the turn; guarded by Client.turnsMu

	// With a driver.Transferer: the turn's holder, while it waits for a
	// lock of this client on the key to be released, offers to take the
	// lock over instead (see Lock.Release). streak is when the first lock
	// of a run of handovers was acquired (zero: no run). Guarded by
	// Client.turnsMu.
	parked *handover
	streak time.Time
}

// handoverWindow bounds a run of handovers on one key: once a run has gone
// on for this long, the next lock is released as usual, so that the other
// clients waiting for the key get their chance, at worst this much later
// than they would without handovers. Handovers matter for short holds,
// where a round trip is a large share of a handoff; a hold longer than the
// window is always released as usual.
const handoverWindow = 20 * time.Millisecond

// A handover is the offer of a waiting call to take over the lock that
// holds its key when that lock is released.
type handover struct {
	o      options       // the waiting call's (a copy, so that its own stays on its stack)
	state  handoverState // guarded by Client.turnsMu
	result chan *Lock    // the lock handed over, or nil if the handover failed
}

type handoverState int

const (
	offered   handoverState = iota // waiting for a Release
	claimed                        // a Release is handing the lock over
	delivered                      // the result is in result
	withdrawn                      // the waiter stopped waiting before a claim
	abandoned                      // the waiter stopped waiting after a claim
)

// offer makes the caller, which holds t, the taker of the next handover
// of t's key.
func (c *Client) offer(t *turn, o *options) *handover {
	h := &handover{o: *o, result: make(chan *Lock, 1)}
	c.turnsMu.Lock()
	t.parked = h
	c.turnsMu.Unlock()
	return h
}

// withdraw takes back h. It returns false if a Release claimed it, whose
// result comes on h.result.
func (c *Client) withdraw(t *turn, h *handover) bool {
	c.turnsMu.Lock()
	defer c.turnsMu.Unlock()
	if h.state != offered {
		return false
	}
	h.state = withdrawn
	if t.parked == h {
		t.parked = nil
	}
	return true
}

// abandon gives up a claimed handover, whose Release then gives the key
// back. It returns false if the result is in already.
func (c *Client) abandon(h *handover) bool {
	c.turnsMu.Lock()
	defer c.turnsMu.Unlock()
	if h.state != claimed {
		return false
	}
	h.state = abandoned
	return true
}

// claimHandover returns the handover offered on key, claimed for the
// Release of a lock of this client acquired at since, or nil if there is
// none, or if the run of handovers on key (which began when its first lock
// was acquired) began handoverWindow ago or more.
func (c *Client) claimHandover(key string, since time.Time) *handover {
	if c.nturns.Load() == 0 {
		return nil
	}
	c.turnsMu.Lock()
	defer c.turnsMu.Unlock()
	t := c.turns[key]
	if t == nil || t.parked == nil {
		return nil
	}
	if t.streak.IsZero() {
		t.streak = since
	}
	if time.Since(t.streak) >= handoverWindow {
		t.streak = time.Time{}
		return nil
	}
	h := t.parked
	t.parked = nil
	h.state = claimed
	return h
}

// deliver completes the claimed handover h with l, nil if it failed. It
// returns false if the waiter abandoned h.
func (c *Client) deliver(h *handover, l *Lock) bool {
	c.turnsMu.Lock()
	defer c.turnsMu.Unlock()
	if h.state == abandoned {
		return false
	}
	h.state = delivered
	h.result <- l
	return true
}

// sleepOffering is sleep for the holder of t while a lock of this client
// holds the key: it also offers to take that lock over. It returns the
// lock handed over; or nil, to try the backend, and whether the key may
// have been released meanwhile (a release ended the sleep, or a handover
// failed); or the error of a wait that ctx ended.
func (c *Client) sleepOffering(ctx context.Context, key string, t *turn, o *options, d time.Duration, w driver.Watch, last error) (_ *Lock, released bool, _ error) {
	h := c.offer(t, o)
	var announced <-chan struct{}
	if w != nil {
		announced = w.Released()
	}
	timer := time.NewTimer(max(d, 0))
	defer timer.Stop()
	select {
	case l := <-h.result:
		return l, l == nil, nil
	case <-ctx.Done():
	case <-timer.C:
	case <-announced:
		released = true
	case <-t.released:
		released = true
	}
	if c.withdraw(t, h) {
		if ctx.Err() != nil {
			return nil, false, gaveUp(ctx, key, last)
		}
		return nil, released, nil
	}
	// A Release is handing its lock over.
	select {
	case l := <-h.result:
		return l, l == nil, nil
	case <-ctx.Done():
		if c.abandon(h) {
			return nil, false, gaveUp(ctx, key, last)
		}
		if l := <-h.result; l != nil {
			return l, false, nil
		}
		return nil, false, gaveUp(ctx, key, last)
	}
}

// joinTurn returns the turn of key, creating it if need be. Each call
// must be matched by one call of leaveTurn.
func (c *Client) joinTurn(key string) *turn {
	c.turnsMu.Lock()
	defer c.turnsMu.Unlock()
	t := c.turns[key]
	if t == nil {
		if c.turns == nil {
			c.turns = make(map[string]*turn)
		}
		t = &turn{token: make(chan bool, 1), released: make(chan struct{}, 1)}
		t.token <- false
		c.turns[key] = t
		c.nturns.Add(1)
	}
	t.refs++
	return t
}

// queuedTurn joins the turn of key if other calls are waiting for it, and
// returns nil if none are.
func (c *Client) queuedTurn(key string) *turn {
	if c.nturns.Load() == 0 {
		return nil // nobody waits for any key: spare the lock
	}
	c.turnsMu.Lock()
	defer c.turnsMu.Unlock()
	t := c.turns[key]
	if t != nil {
		t.refs++
	}
	return t
}

// leaveTurn undoes one joinTurn or queuedTurn.
func (c *Client) leaveTurn(key string, t *turn) {
	c.turnsMu.Lock()
	defer c.turnsMu.Unlock()
	if t.refs--; t.refs == 0 {
		delete(c.turns, key)
		c.nturns.Add(-1)
	}
}

// releasedKey tells the waiters of this client, if any, that a lock on key
// was released, unless key's turn is quiet (nil for none): its holder is
// the caller, which knows.
func (c *Client) releasedKey(key string, quiet *turn) {
	if c.nturns.Load() == 0 {
		return
	}
	c.turnsMu.Lock()
	t := c.turns[key]
	if t != nil {
		t.streak = time.Time{}
	}
	c.turnsMu.Unlock()
	if t != nil && t != quiet {
		select {
		case t.released <- struct{}{}:
		default:
		}
	}
}

// awaitTurn waits for t's turn, giving up when ctx is done or the retry
// strategy would have given up by then (counting the attempts the turn's
// holder makes meanwhile as this caller's own). It returns the turn's
// value (whether the last holder acquired the key) and the number of
// attempts counted, or, if it gave up, Acquire's error, built on last (the
// cause of the caller's last attempt).
func awaitTurn(ctx context.Context, key string, t *turn, o *options, attempt int, last error) (acquired bool, attempts int, err error) {
	for {
		delay, again := o.retry.Delay(attempt)
		if !again {
			return false, attempt, last
		}
		timer := time.NewTimer(max(delay, 0))
		select {
		case v := <-t.token:
			timer.Stop()
			return v, attempt, nil
		case <-ctx.Done():
			timer.Stop()
			return false, attempt, gaveUp(ctx, key, last)
		case <-timer.C:
			attempt++
		}
	}
}
