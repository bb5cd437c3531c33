package lock

// This file holds what Close needs to let go. Close waits for the
// operations in flight on the connection, and releases the locks the
// client holds.

// enter admits an operation that uses the client's connection, and reports
// false if the client is closed. Each admitted operation calls leave when
// its calls to the driver are done. Close waits for the operations
// admitted before it.
func (c *Client) enter() bool {
	// The operation is counted first. Close sets closed first and then
	// reads the count, so that one of the two sees the other.
	c.ops.Add(1)
	if c.closed.Load() {
		c.leave()
		return false
	}
	return true
}

// leave ends an operation that enter admitted.
func (c *Client) leave() {
	if c.ops.Add(-1) == 0 && c.closed.Load() {
		c.idleOne.Do(func() { close(c.idle) })
	}
}

// track adds l to the client's held locks, and reports false, adding
// nothing, if the client is closed. The caller then releases l itself.
func (c *Client) track(l *Lock) bool {
	c.heldMu.Lock()
	defer c.heldMu.Unlock()
	if c.closed.Load() {
		return false
	}
	l.next = c.held
	if c.held != nil {
		c.held.prev = l
	}
	c.held = l
	return true
}

// untrack removes l from the client's held locks, if it is there.
func (c *Client) untrack(l *Lock) {
	c.heldMu.Lock()
	defer c.heldMu.Unlock()
	if l.prev == nil && c.held != l {
		return // not tracked, or removed already
	}
	if l.prev != nil {
		l.prev.next = l.next
	} else {
		c.held = l.next
	}
	if l.next != nil {
		l.next.prev = l.prev
	}
	l.prev, l.next = nil, nil
}

// closeHeld marks the client closed, so that no lock is tracked from now
// on, and returns the locks it holds, no longer tracked. It reports false
// if the client was closed already.
func (c *Client) closeHeld() ([]*Lock, bool) {
	c.heldMu.Lock()
	defer c.heldMu.Unlock()
	if c.closed.Swap(true) {
		return nil, false
	}
	var ls []*Lock
	for l := c.held; l != nil; {
		next := l.next
		l.prev, l.next = nil, nil
		ls = append(ls, l)
		l = next
	}
	c.held = nil
	return ls, true
}
