package lock

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// releaseTimeout bounds the release at the end of [Client.Do], which runs
// even if Do's context has ended.
const releaseTimeout = 5 * time.Second

// Do acquires the lock on key as [Client.Acquire] does, runs fn while
// holding it, and releases it when fn returns.
//
// While fn runs, Do keeps the lock alive ([Lock.KeepAlive]). It extends
// the lease each time a third of the TTL has passed, and retries a failed
// extension while the lock is still valid. The lock ends when an extension
// is refused, when the validity runs out, or when the client is closed. On
// drivers that cannot extend, the validity runs out after one TTL. The
// moment the lock ends, fn's context is cancelled with a cause matching
// [ErrLost] or [ErrClosed] (see context.Cause). fn should stop touching
// the protected resource then. fn's context also carries the lock (see
// [FromContext]).
//
// Do returns fn's error. If the lock was lost or let go while fn ran, the
// error matches ErrLost or ErrClosed too, even if fn returned nil, since
// fn's work may not have been protected to the end. A failure to release
// is logged, not returned. The lock then expires by its TTL.
func (c *Client) Do(ctx context.Context, key string, fn func(context.Context) error, opts ...Option) (err error) {
	if fn == nil {
		return opError("do", key, fmt.Errorf("%w: nil function", ErrInvalidOption))
	}
	o, err := apply(key, c.defaults, opts)
	if err != nil {
		return opError("do", key, err)
	}
	ctx, t := c.trace(ctx, "do", key)
	l, err := c.acquireTraced(ctx, key, &o)
	if err != nil {
		t.end(ctx, Event{Err: err})
		return err
	}
	return c.hold(ctx, key, l, t, fn)
}

// hold is Do once l is acquired: it runs fn while keeping l alive, and
// releases l when fn returns. key names the lock in errors and logs.
func (c *Client) hold(ctx context.Context, key string, l *Lock, t opTrace, fn func(context.Context) error) (err error) {
	if t.on() {
		defer func() { t.end(ctx, Event{Err: err, Held: time.Since(l.start)}) }()
	}
	fctx, cancel := context.WithCancelCause(context.WithValue(ctx, lockKey{}, l))
	defer cancel(nil)
	// The keeper outlives ctx. The function may still be winding up after
	// ctx ends, and the lock must stay held until it returns. The stop is
	// deferred so that a panicking fn does not leave the lock extended
	// forever. The keeper stops and the lock is released as the panic goes
	// up.
	stop := l.keepAlive(ctx, func(cause error) {
		if !errors.Is(cause, ErrClosed) && !errors.Is(cause, ErrLost) {
			// fn released the lock itself. For Do, that is the lock lost too.
			cause = fmt.Errorf("%w: %w before the function returned", ErrLost, cause)
		}
		cancel(cause)
	})
	defer func() {
		stop()
		ended := context.Cause(fctx)
		if !errors.Is(ended, ErrLost) && !errors.Is(ended, ErrClosed) {
			ended = nil
		}
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer rcancel()
		if rerr := l.Release(rctx); rerr != nil && ended == nil {
			c.warn(ctx, "lock: release after Do failed; the key stays held until its TTL runs out",
				"key", key, "err", rerr)
		}
		if ended != nil {
			err = opError("do", key, errors.Join(ended, err))
		}
	}()
	return fn(fctx)
}

type lockKey struct{}

// FromContext returns the lock held by the [Client.Do] call whose
// function received ctx, or nil if ctx comes from no such call. It is how fn
// gets the lock's fencing token.
func FromContext(ctx context.Context) *Lock {
	l, _ := ctx.Value(lockKey{}).(*Lock)
	return l
}
