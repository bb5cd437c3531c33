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
// While fn runs, Do extends the lease in the background each time a third
// of the TTL has passed, and retries a failed extension while the lock is
// still valid. The moment the lock is lost (an extension is refused, or the
// validity runs out, as it does after one TTL on drivers that cannot extend)
// fn's context is cancelled with a cause matching [ErrLost]
// (see context.Cause); fn should stop touching the protected resource then.
// fn's context also carries the lock: see [FromContext].
//
// Do returns fn's error. If the lock was lost while fn ran, the error
// matches [ErrLost] too, even if fn returned nil, since fn's work may not
// have been protected to the end. A failure to release is logged, not
// returned: the lock then expires by its TTL.
func (c *Client) Do(ctx context.Context, key string, fn func(context.Context) error, opts ...Option) (err error) {
	if fn == nil {
		return opError("do", key, fmt.Errorf("%w: nil function", ErrInvalidOption))
	}
	o, err := apply(key, opts)
	if err != nil {
		return opError("do", key, err)
	}
	l, err := c.acquire(ctx, key, &o)
	if err != nil {
		return err
	}
	fctx, cancel := context.WithCancelCause(context.WithValue(ctx, lockKey{}, l))
	defer cancel(nil)
	// The keeper outlives ctx: the function may still be winding up after
	// ctx ends, and the lock must stay held until it returns.
	kctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	kept := make(chan struct{})
	go func() {
		defer close(kept)
		c.keep(kctx, l, o.ttl, cancel)
	}()
	// Deferred, so that a panicking fn does not leave the lock extended
	// forever: the keeper stops and the lock is released as the panic
	// goes up.
	defer func() {
		stop()
		<-kept
		lost := context.Cause(fctx)
		if !errors.Is(lost, ErrLost) {
			lost = nil
		}
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer rcancel()
		if rerr := l.Release(rctx); rerr != nil && lost == nil {
			c.log().WarnContext(ctx, "lock: release after Do failed; the key stays held until its TTL runs out",
				"key", key, "err", rerr)
		}
		if lost != nil {
			err = opError("do", key, errors.Join(lost, err))
		}
	}()
	return fn(fctx)
}

// keep extends l in the background while Do's function runs, until ctx is
// done, and cancels the function's context (with stop) when the lock is
// lost.
func (c *Client) keep(ctx context.Context, l *Lock, ttl time.Duration, stop context.CancelCauseFunc) {
	canExtend := l.cn.extender != nil
	every := ttl / 3
	retry := max(every/8, MinTTL/2)
	next := l.start.Add(every)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		until := l.ValidUntil()
		if !canExtend || next.After(until) {
			next = until
		}
		t.Reset(time.Until(next))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if ctx.Err() != nil { // the function has returned
			return
		}
		now := time.Now()
		if !now.Before(l.ValidUntil()) {
			l.mu.Lock()
			l.lapse(now)
			l.mu.Unlock()
			c.stopLost(ctx, l, stop, errors.New("its validity ran out"))
			return
		}
		start := time.Now()
		err := l.Extend(ctx, ttl)
		switch {
		case err == nil:
			next = start.Add(every)
		case ctx.Err() != nil: // the function has returned
			return
		case errors.Is(err, ErrNotHeld):
			c.stopLost(ctx, l, stop, err)
			return
		default:
			c.log().DebugContext(ctx, "lock: extension failed; retrying", "key", l.key, "err", err)
			next = time.Now().Add(retry)
		}
	}
}

// stopLost cancels Do's function, with stop, for a cause matching ErrLost,
// and logs why.
func (c *Client) stopLost(ctx context.Context, l *Lock, stop context.CancelCauseFunc, why error) {
	c.log().WarnContext(ctx, "lock: lost while Do's function ran", "key", l.key, "err", why)
	stop(fmt.Errorf("%w: %w", ErrLost, why))
}

type lockKey struct{}

// FromContext returns the lock held by the [Client.Do] call whose
// function received ctx, or nil if ctx comes from no such call. It is how fn
// gets the lock's fencing token.
func FromContext(ctx context.Context) *Lock {
	l, _ := ctx.Value(lockKey{}).(*Lock)
	return l
}
