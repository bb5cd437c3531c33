// Package inflight keeps a driver connection's calls in flight, so that
// the connection's Close can end them at once.
package inflight

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Calls are the calls in flight of one connection. The zero value is
// ready to use. It is safe for concurrent use.
type Calls struct {
	mu      sync.Mutex
	cancels map[*call]context.CancelFunc
	closed  bool
}

// call identifies a call in flight.
type call struct{ _ byte }

// Begin returns the context of one call under ctx. It ends with ctx,
// after timeout (with cause as its cause), or when Close is called. The
// call must call done when it returns.
func (c *Calls) Begin(ctx context.Context, timeout time.Duration, cause error) (_ context.Context, done func()) {
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, cause)
	id := new(call)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		cancel()
		return ctx, cancel
	}
	if c.cancels == nil {
		c.cancels = make(map[*call]context.CancelFunc)
	}
	c.cancels[id] = cancel
	return ctx, func() {
		c.mu.Lock()
		delete(c.cancels, id)
		c.mu.Unlock()
		cancel()
	}
}

// Close ends every call in flight, and every call begun after it.
func (c *Calls) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, cancel := range c.cancels {
		cancel()
	}
}

// EndedByClose reports whether ctx, the context of a call that Begin
// returned, was ended by Close.
func (c *Calls) EndedByClose(ctx context.Context) bool {
	if !errors.Is(context.Cause(ctx), context.Canceled) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}
