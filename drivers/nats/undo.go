package nats

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/distlock/lock/driver"
)

// undoLimit bounds the undoings under way; past it, a key that a failed
// acquisition may have set is left to its TTL.
const undoLimit = 1024

// undoPause is the pause between an undoing's tries.
const undoPause = 250 * time.Millisecond

// failed returns err, the failure of an acquisition of key by value whose
// write may have been applied (sent, and unanswered or refused without a
// verdict), after starting its undoing: a background release of the key
// by value, tried again until the TTL has passed (the server then removed
// the key) or the connection closes. A stream without quorum, say, may
// commit the write once its nodes come back. Meanwhile the core's release
// of value returns at once, so that it does not outlast the caller's
// deadline on a cluster that does not answer.
func (c *conn) failed(ctx context.Context, key, value string, ttl time.Duration, err error) error {
	err = fail(ctx, "acquire", err)
	if errors.Is(err, driver.ErrMisconfigured) {
		return err // nothing was written
	}
	c.undos.start(c, key, value, time.Now().Add(ttl+time.Second))
	return err
}

// undos are a connection's undoings under way, by value.
type undos struct {
	mu      sync.Mutex
	values  map[string]bool // true until the core's release took it
	stopped bool
	wg      sync.WaitGroup
}

func (u *undos) start(c *conn, key, value string, until time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.stopped || len(u.values) >= undoLimit {
		return
	}
	if u.values == nil {
		u.values = make(map[string]bool)
	}
	u.values[value] = true
	u.wg.Go(func() {
		defer func() {
			u.mu.Lock()
			delete(u.values, value)
			u.mu.Unlock()
		}()
		for c.ctx.Err() == nil && time.Now().Before(until) {
			err := c.undo(key, value)
			if err == nil || errors.Is(err, driver.ErrNotHeld) && time.Now().After(until.Add(-time.Second)) {
				return
			}
			pause(c.ctx, undoPause)
		}
	})
}

// undo releases key by value, under the request timeout.
func (c *conn) undo(key, value string) error {
	e, err := c.read(c.ctx, key, "undo")
	switch {
	case err != nil:
		return err
	case !e.live:
		return driver.ErrNotHeld // not yet, or no longer: try again until the TTL passed
	case e.value != value:
		return nil // another holder: the write never took the key
	}
	return c.release(c.ctx, key, value, e.rev)
}

// taken reports whether value's undoing is under way, the first time it
// is asked.
func (u *undos) taken(value string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.values[value] {
		return false
	}
	u.values[value] = false
	return true
}

// wait stops new undoings and waits for those under way, which end with
// the connection's context.
func (u *undos) wait() {
	u.mu.Lock()
	u.stopped = true
	u.mu.Unlock()
	u.wg.Wait()
}
