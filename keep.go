package lock

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// KeepAlive extends the lock in the background each time a third of its
// TTL has passed. It retries an extension that failed while the lock is
// still valid. It goes on until stop is called or the lock ends. The lock
// ends when [Lock.Done] is closed, because it was lost, released, or let
// go by its client's Close. stop waits for the background work to end.
// KeepAlive is how [Client.Do] keeps its lock. For a lock held outside Do,
// pair it with Done, as below.
//
//	stop := l.KeepAlive()
//	defer stop()
//	select {
//	case <-l.Done():
//		return l.Err() // lost: stop writing
//	case <-finished:
//	}
//
// On a driver that cannot extend leases, nothing is extended, and the
// lock ends at its ValidUntil.
func (l *Lock) KeepAlive() (stop func()) { return l.keepAlive(context.Background(), nil) }

// keepAlive is KeepAlive, logging with ctx's values (it outlives ctx),
// and calling onEnd, if not nil, with the cause if the lock ends before
// stop is called. onEnd runs the moment Done closes, on the goroutine that
// closes it (the validity's timer, say), so that neither an extension or a
// release in progress nor a goroutine's wake-up delays it. onEnd must be
// quick: cancelling a context is.
func (l *Lock) keepAlive(ctx context.Context, onEnd func(cause error)) (stop func()) {
	kctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { l.keep(kctx) })
	if onEnd != nil {
		l.whenDone(func() {
			if kctx.Err() == nil {
				onEnd(l.Err())
			}
		})
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

// keep extends l until ctx is done or l ends.
func (l *Lock) keep(ctx context.Context) {
	ended := l.Done()
	every := l.ttl / 3
	retry := max(every/8, MinTTL/2)
	next := l.start.Add(every)
	if l.cn.extender == nil && l.cn.leaser == nil {
		next = time.Time{} // never: wait for the end
	}
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	var why error // the last extension's failure
	for {
		var due <-chan time.Time
		if !next.IsZero() {
			t.Reset(time.Until(next))
			due = t.C
		}
		select {
		case <-ctx.Done():
			// A lock that ended before the stop was seen was lost while
			// kept: a caller that stops keeping it because Done closed
			// (distlock run, say) must not race its warning away.
			select {
			case <-ended:
				l.ended(ctx, why)
			default:
			}
			return
		case <-ended:
			l.ended(ctx, why)
			return
		case <-due:
		}
		start := time.Now()
		switch err := l.Extend(ctx, l.ttl); {
		case err == nil:
			next = start.Add(every)
		case ctx.Err() != nil:
			// Stopped during an extension: the lock may have ended
			// meanwhile, while kept.
			select {
			case <-ended:
				l.ended(ctx, cmp.Or(why, err))
			default:
			}
			return
		case errors.Is(err, ErrNotHeld), errors.Is(err, ErrClosed):
			why, next = err, time.Time{} // the end comes next
		default:
			l.c.log().DebugContext(ctx, "lock: extension failed; retrying", "key", l.key, "err", err)
			why, next = err, time.Now().Add(retry)
		}
	}
}

// ended logs why the kept lock l ended, if it was lost. why is the last
// extension's failure, if any.
func (l *Lock) ended(ctx context.Context, why error) {
	cause := l.Err()
	if errors.Is(cause, ErrLost) {
		if why != nil {
			cause = fmt.Errorf("%w: %w", ErrLost, why)
		}
		l.c.warn(ctx, "lock: lost while kept alive", "key", l.key, "err", cause)
	}
}
