package lock

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"time"

	"github.com/distlock/lock/driver"
)

// valueBytes is how many random bytes identify one acquisition.
const valueBytes = 20

// randomLen is the length of a value's random part:
// base64.RawURLEncoding.EncodedLen(valueBytes).
const randomLen = 27

// newValue returns a fresh random value for one acquisition. The value is
// 20 bytes from crypto/rand in unpadded URL-safe base64 (27 characters),
// and is never reused. A semaphore's permit or an election's term appends
// a tag to it (see options.tag), which others read back with valueTag.
func newValue() string {
	var b [valueBytes]byte
	rand.Read(b[:]) // never fails; see crypto/rand.Read
	var s [randomLen]byte
	base64.RawURLEncoding.Encode(s[:], b[:])
	return string(s[:])
}

// valueTag returns the tag that value carries after its random part, or
// "" if it carries none.
func valueTag(value string) string {
	if len(value) <= randomLen {
		return ""
	}
	return value[randomLen:]
}

// attempt makes one attempt to acquire key with a fresh value. turn is
// the queue of key whose turn the caller holds, if any. Undoing a failed
// attempt does not signal a release to that queue. The caller would take
// it for a release by another lock of this client, and try again at once.
func (c *Client) attempt(ctx context.Context, cn *conn, key string, o *options, turn *queue) (*Lock, error) {
	if !c.enter() {
		return nil, opError("acquire", key, ErrClosed)
	}
	defer c.leave()
	value := newValue() + o.tag
	start := time.Now()
	lease, err := cn.Acquire(ctx, key, value, o.ttl)
	if err != nil {
		if errors.Is(err, driver.ErrHeld) {
			c.stats.contended.Add(1)
			return nil, opError("acquire", key, translate(err, driver.ErrHeld, ErrNotAcquired))
		}
		c.stats.failed.Add(1)
		if err = classify(ctx, err); !neverReached(err) {
			c.undo(ctx, cn, key, value, turn)
		}
		c.log().DebugContext(ctx, "lock: acquire attempt failed", "key", key, "err", err)
		return nil, opError("acquire", key, err)
	}
	l := c.grant(cn, key, value, lease, start, o)
	switch {
	case l == nil:
		c.stats.failed.Add(1)
		c.undo(ctx, cn, key, value, turn)
		return nil, opError("acquire", key, errTooLate)
	case !c.track(l):
		// The client closed while the attempt was in flight.
		c.undo(ctx, cn, key, value, turn)
		return nil, opError("acquire", key, ErrClosed)
	}
	c.stats.acquired.Add(1)
	return l, nil
}

// grant returns the Lock of value's lease on key, granted by a request
// sent at start, with the validity that o gives it, or nil if that
// validity has run out already.
func (c *Client) grant(cn *conn, key, value string, lease driver.Lease, start time.Time, o *options) *Lock {
	until := start.Add(o.ttl - drift(o.ttl, o.drift))
	if !time.Now().Before(until) {
		return nil
	}
	l := &Lock{c: c, cn: cn, key: key, value: value, token: lease.Token, fenced: lease.Fenced, ttl: o.ttl, start: start, drift: o.drift}
	if lease.State != nil {
		st := lease.State // its own variable, so that lease stays on the stack
		l.grant = &st
	}
	l.until.Store(int64(until.Sub(start)))
	if lease.Lost != nil {
		go l.watchLost(lease.Lost)
	}
	return l
}

// undo cleans up after a failed attempt (see cleanup), waiting for it
// while ctx allows, so that a failed call leaves nothing held. Once ctx is
// done, the cleanup goes on in the background, so that the caller's
// deadline holds. Close waits for it, as for any operation.
func (c *Client) undo(ctx context.Context, cn *conn, key, value string, turn *queue) {
	entered := c.enter()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if entered {
			defer c.leave()
		}
		c.cleanup(ctx, cn, key, value, turn)
	}()
	if !entered {
		<-done // closing: Close waits for the attempt, and so for this
		return
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// cleanupTimeout bounds the release of a lock that a failed acquisition
// (or a late extension) may have left behind.
const cleanupTimeout = 2 * time.Second

// cleanup releases key if value holds it, under its own timeout, since
// ctx may be the reason the operation failed, and tells the client's calls
// waiting for key, but for the holder of quiet's turn (if not nil), that
// key was released. It returns nil once value surely does not hold key.
func (c *Client) cleanup(ctx context.Context, cn *conn, key, value string, quiet *queue) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	err := cn.Release(ctx, key, value)
	if err == nil {
		c.waits.released(key, quiet)
		return nil
	}
	if errors.Is(err, driver.ErrNotHeld) {
		return nil
	}
	c.warn(ctx, "lock: cleanup failed; the key may stay held until its TTL runs out", "key", key, "err", err)
	return err
}
