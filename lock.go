package lock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/fencing"
)

// Lock is one acquisition of a key, returned by [Client.Acquire] and
// [Client.TryAcquire]. Its key, value and token never change. Its validity
// moves forward with each successful [Lock.Extend]. [Lock.Done] tells when
// it ends. A Lock is safe for concurrent use. Extend and Release calls on
// one Lock run one at a time.
type Lock struct {
	c     *Client
	cn    *conn
	key   string
	value string
	token uint64        // the fencing token, if fenced
	grant *any          // the driver's Lease.State, as last returned, if any; guarded by mu
	ttl   time.Duration // granted with, for KeepAlive
	drift float64
	start time.Time // clock reading taken before the acquisition was sent

	until atomic.Int64 // ValidUntil, as nanoseconds after start
	end   lockEnd      // Done's channel and timer

	mu     sync.Mutex // serialises Extend and Release; state changes under it, but for Done's timer and Lease.Lost
	state  stateVar   // and the cause of the end, where the state does not say it all
	fenced bool       // token is set

	prev, next *Lock // in the client's held locks; guarded by Client.heldMu
}

// Key returns the key the lock is held on.
func (l *Lock) Key() string { return l.key }

// Token returns the lock's fencing token, and false if the driver does not
// issue tokens. Tokens of one key strictly increase with each acquisition.
// Pass the token to the protected resource with every write, and let the
// resource refuse tokens older than the newest it has seen (see package
// fencing).
func (l *Lock) Token() (fencing.Token, bool) {
	return fencing.Token(l.token), l.fenced
}

// Extend resets the lock's lease to ttl from now, if the lock is still
// held, and moves [Lock.ValidUntil] accordingly (which may move it earlier,
// if ttl is shorter than what was left). The backend is asked only while
// the lock is valid, and an extension counts only if the answer arrives
// before the validity it was meant to prolong runs out. An extension that
// comes too late proves nothing, so the lock is then released and treated
// as lost.
//
// If the lock is no longer held (released, expired, or taken over), the
// error matches [ErrNotHeld]. If the driver cannot extend leases, it
// matches [errors.ErrUnsupported]. Any other error is the backend's. The
// lock then stays valid until ValidUntil, and Extend may be called again.
func (l *Lock) Extend(ctx context.Context, ttl time.Duration) error {
	ctx, t := l.c.trace(ctx, "extend", l.key)
	err := l.extend(ctx, ttl)
	t.end(ctx, Event{Err: err})
	return err
}

// extend is Extend, without its trace.
func (l *Lock) extend(ctx context.Context, ttl time.Duration) error {
	if err := checkTTL(ttl); err != nil {
		return opError("extend", l.key, err)
	}
	if !l.c.enter() {
		return opError("extend", l.key, ErrClosed)
	}
	defer l.c.leave()
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.state.Load().ended():
		return opError("extend", l.key, ErrNotHeld)
	case l.cn.extender == nil && l.cn.leaser == nil:
		return opError("extend", l.key, fmt.Errorf("driver %T cannot extend leases: %w", l.cn.Conn, errors.ErrUnsupported))
	}
	deadline := l.ValidUntil()
	start := time.Now()
	if !start.Before(deadline) {
		l.expire(deadline, errValidityRanOut)
		return opError("extend", l.key, fmt.Errorf("%w: its validity ran out", ErrNotHeld))
	}
	dctx, cancel := context.WithDeadline(ctx, deadline)
	err := l.sendExtend(dctx, ttl)
	cancel()
	if err := l.extended(ctx, ttl, start, deadline, err); err != nil {
		return opError("extend", l.key, err)
	}
	return nil
}

// sendExtend asks the driver to extend the lease to ttl, handing it the
// grant's state if it wants it. l.mu must be held.
func (l *Lock) sendExtend(ctx context.Context, ttl time.Duration) error {
	if l.cn.leaser == nil {
		return l.cn.extender.Extend(ctx, l.key, l.value, ttl)
	}
	nl, err := l.cn.leaser.ExtendLease(ctx, l.key, l.value, l.granted(), ttl)
	if err == nil {
		l.grant = nil
		if nl.State != nil {
			st := nl.State
			l.grant = &st
		}
	}
	return err
}

// sendRelease asks the driver to release the lease, handing it the
// grant's state if it wants it. l.mu must be held.
func (l *Lock) sendRelease(ctx context.Context) error {
	if l.cn.leaser == nil {
		return l.cn.Release(ctx, l.key, l.value)
	}
	return l.cn.leaser.ReleaseLease(ctx, l.key, l.value, l.granted())
}

// sendTransfer asks the driver to transfer the lease to next, handing it
// the grant's state if it wants it. l.mu must be held.
func (l *Lock) sendTransfer(ctx context.Context, next string, ttl time.Duration) (driver.Lease, error) {
	if l.cn.leaseTransferer == nil {
		return l.cn.transferer.Transfer(ctx, l.key, l.value, next, ttl)
	}
	return l.cn.leaseTransferer.TransferLease(ctx, l.key, l.value, l.granted(), next, ttl)
}

// granted returns the lease as the driver last described it. l.mu must
// be held.
func (l *Lock) granted() driver.Lease {
	g := driver.Lease{Token: l.token, Fenced: l.fenced}
	if l.grant != nil {
		g.State = *l.grant
	}
	return g
}

// extended records the answer err of an extension to ttl sent at start,
// which counts only if it came back before deadline, the validity it was
// to prolong. l.mu must be held.
func (l *Lock) extended(ctx context.Context, ttl time.Duration, start, deadline time.Time, err error) error {
	inTime := time.Now().Before(deadline)
	switch {
	case err == nil && inTime && l.prolong(start.Add(ttl-drift(ttl, l.drift))):
		l.c.stats.extended.Add(1)
		return nil
	case err == nil:
		// Extended, but too late to count, so give the key back.
		l.expire(deadline, errValidityRanOut)
		l.giveBack(ctx)
		return fmt.Errorf("%w: the extension came back after its validity ran out", ErrNotHeld)
	case errors.Is(err, driver.ErrNotHeld):
		l.knownLost(start)
		return translate(err, driver.ErrNotHeld, ErrNotHeld)
	case !inTime:
		// The extension may have landed, so give the key back.
		l.expire(deadline, errValidityRanOut)
		l.giveBack(ctx)
		return fmt.Errorf("%w: its validity ran out during the extension: %w", ErrNotHeld, err)
	}
	return err
}

// Release releases the lock, so that others may take the key at once. If
// an Acquire of the same client waits for the key and the driver can
// transfer leases, Release hands the lock over to that call instead (see
// [Client.Acquire]). If the lock was no longer held (it expired, was taken
// over, or was already released), the error matches [ErrNotHeld]. A lock
// past its ValidUntil whose lease the backend still keeps is released as
// usual. The drift allowance makes that common. Any other error is the
// backend's. The lock may then still be held, and Release may be called
// again. If Release never succeeds, the lock expires by its TTL.
//
// After the client's Close, Release returns nil if Close released the
// lock, and an error matching [ErrClosed] if it could not.
func (l *Lock) Release(ctx context.Context) error {
	ctx, t := l.c.trace(ctx, "release", l.key)
	err := l.release(ctx)
	if t.on() {
		t.end(ctx, Event{Err: err, Held: time.Since(l.start)})
	}
	return err
}

// release is Release, without its trace.
func (l *Lock) release(ctx context.Context) error {
	if !l.c.enter() {
		if l.state.Load() == closed && l.state.Cause() == causeNone {
			return nil // Close released it
		}
		return opError("release", l.key, ErrClosed)
	}
	defer l.c.leave()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state.Load().ended() {
		return opError("release", l.key, ErrNotHeld)
	}
	start := time.Now()
	if l.cn.transferer != nil {
		if h := l.c.waits.claim(l.key, l.start); h != nil {
			return l.handOver(ctx, h, start)
		}
	}
	err := l.sendRelease(ctx)
	switch {
	case err == nil:
		l.recordRelease(start)
		l.c.waits.released(l.key, nil)
		return nil
	case errors.Is(err, driver.ErrNotHeld):
		l.c.waits.released(l.key, nil)
		return l.notHeld(start, err)
	}
	return opError("release", l.key, err)
}

// handOver releases the lock by transferring it to the call of the same
// client that offered h, in one step (see driver.Transferer). start is
// the clock reading taken before the transfer was sent. The new lock's
// validity runs from there, under the waiting call's options. l.mu must be
// held.
func (l *Lock) handOver(ctx context.Context, h *handover, start time.Time) error {
	c := l.c
	next := newValue() + h.tag
	lease, err := l.sendTransfer(ctx, next, h.ttl)
	switch {
	case err == nil:
		l.recordRelease(start)
		o := options{ttl: h.ttl, drift: h.drift, tag: h.tag}
		nl := c.grant(l.cn, l.key, next, lease, start, &o)
		switch {
		case nl == nil:
			c.stats.failed.Add(1)
		case !c.track(nl):
			// The client closed meanwhile. The key is given back below.
		case h.deliver(nl):
			c.stats.acquired.Add(1)
			return nil
		default:
			c.untrack(nl)
		}
		// The lock came too late to count for the waiting call, or the
		// call stopped waiting, so give the key back.
		c.cleanup(ctx, l.cn, l.key, next, nil)
		h.deliver(nil)
		return nil
	case errors.Is(err, driver.ErrNotHeld):
		h.deliver(nil)
		return l.notHeld(start, err)
	}
	// The transfer may have happened or not. Make sure next holds nothing.
	c.cleanup(ctx, l.cn, l.key, next, nil)
	h.deliver(nil)
	return opError("release", l.key, err)
}

// expire marks the lock as lost at instant t, for why, counting it once,
// and announces its end. The backend may still keep the lease. l.mu must
// be held.
func (l *Lock) expire(t time.Time, why error) {
	l.countLost(t, why)
	l.announceEnd()
}

// countLost is expire without the announcement, for a caller that sets
// the lock's final state before announcing it. l.mu must be held.
func (l *Lock) countLost(t time.Time, why error) {
	l.endBy(t)
	if l.state.CompareAndSwap(held, expired) {
		l.c.stats.lost.Add(1)
		l.c.lost(context.Background(), l.key, why)
	}
}

// knownLost records that the backend, asked at start, said that it does
// not hold the lock. The end is announced once the state says so, so that
// Do's function is cancelled with the right cause. l.mu must be held.
func (l *Lock) knownLost(start time.Time) {
	l.countLost(start, errKnownLost)
	l.finish(lost, causeKnownLost)
}

// finish records that the lock ended in state s, one of the ended states.
// why gives the reason where s does not say it all. The lock leaves its
// client's held locks, and its end is announced. l.mu must be held.
func (l *Lock) finish(s lockState, why endCause) {
	l.state.StoreCause(s, why)
	l.c.untrack(l)
	l.announceEnd()
}

// recordRelease records a release, or a handover, sent at start that
// succeeded. l.mu must be held.
func (l *Lock) recordRelease(start time.Time) {
	l.endBy(start)
	l.c.stats.released.Add(1)
	l.finish(released, causeNone)
}

// notHeld records that the backend, asked at start, said that the lock was
// not held, and returns Release's error. l.mu must be held.
func (l *Lock) notHeld(start time.Time, err error) error {
	l.knownLost(start)
	return opError("release", l.key, translate(err, driver.ErrNotHeld, ErrNotHeld))
}

// giveBack releases a lock that is lost but may still be held by the
// backend (an extension that landed too late, or whose answer never came),
// so that nobody waits a whole TTL for a key that nobody holds. l.mu must
// be held.
func (l *Lock) giveBack(ctx context.Context) {
	if l.c.cleanup(ctx, l.cn, l.key, l.value, nil) == nil {
		l.finish(lost, causeRanOut)
	}
}

// handOut checks the validity of l, a lock about to be handed to its
// caller, last. It returns nil if l may be handed over. If l's validity
// has passed (the call was slow to return it), l is given back in the
// background, counted as a failed attempt, and the error says so.
func (c *Client) handOut(l *Lock) error {
	if l.Err() == nil {
		return nil
	}
	c.stats.acquired.Add(^uint64(0)) // counted at the grant: take it back
	c.stats.failed.Add(1)
	go l.discard()
	return opError("acquire", l.key, errTooLate)
}

// discard gives back a lock whose validity passed before it reached its
// caller, under its own timeout. If the client is closing, its Close
// releases the lock instead.
func (l *Lock) discard() {
	if !l.c.enter() {
		return
	}
	defer l.c.leave()
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state.Load().ended() {
		return
	}
	l.announceEnd()
	l.giveBack(ctx)
}

// releaseOnClose releases the lock for its client's Close. Close has taken
// the lock off the client's held locks, and waits for no other operation
// of the client. releaseOnClose announces the end first, so that Do's
// function stops, and then releases the lease under ctx.
func (l *Lock) releaseOnClose(ctx context.Context) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state.Load().ended() {
		return
	}
	l.state.Store(closed)
	l.announceEnd()
	err := l.sendRelease(ctx)
	switch {
	case err == nil:
		l.endBy(time.Now())
		l.c.stats.released.Add(1)
	case errors.Is(err, driver.ErrNotHeld):
	default:
		l.state.StoreCause(closed, causeNotReleased)
		l.c.warn(ctx, "lock: Close could not release a lock; the key stays held until its TTL runs out", "key", l.key, "err", err)
	}
}

// String describes the lock by its key, token and state. It leaves out
// the lock's value, with which anyone could release or extend it.
func (l *Lock) String() string {
	s := "lock.Lock(" + strconv.Quote(l.key)
	if tok, ok := l.Token(); ok {
		s += " token " + tok.String()
	}
	if err := l.Err(); err != nil {
		return s + ", ended: " + err.Error() + ")"
	}
	return s + ", valid for " + time.Until(l.ValidUntil()).Round(time.Millisecond).String() + ")"
}

// GoString is String, so that %#v does not print the lock's value.
func (l *Lock) GoString() string { return l.String() }
