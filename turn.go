package lock

import (
	"context"
	"time"
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
	}
	t.refs++
	return t
}

// queuedTurn joins the turn of key if other calls are waiting for it, and
// returns nil if none are.
func (c *Client) queuedTurn(key string) *turn {
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
	}
}

// releasedKey tells the waiters of this client, if any, that a lock on key
// was released.
func (c *Client) releasedKey(key string) {
	c.turnsMu.Lock()
	t := c.turns[key]
	c.turnsMu.Unlock()
	if t != nil {
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
// attempts counted, or false if it gave up.
func awaitTurn(ctx context.Context, t *turn, o *options, attempt int) (acquired bool, attempts int, ok bool) {
	for {
		delay, again := o.retry.Delay(attempt)
		if !again {
			return false, attempt, false
		}
		timer := time.NewTimer(max(delay, 0))
		select {
		case v := <-t.token:
			timer.Stop()
			return v, attempt, true
		case <-ctx.Done():
			timer.Stop()
			return false, attempt, false
		case <-timer.C:
			attempt++
		}
	}
}
