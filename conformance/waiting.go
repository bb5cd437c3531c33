package conformance

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/distlock/lock"
)

func (s *suite) acquireWaits(t *testing.T) {
	ctx := s.ctxFor(t)
	a, b := s.client(t), s.client(t)
	k := key(t, "")
	l := mustAcquire(t, ctx, a, k, lock.WithTTL(time.Minute))
	hold := s.h.TTL / 2
	// With wake-ups, a waiter must not need to poll, so make polls rare.
	poll := lock.FixedDelay(s.h.TTL / 10)
	if s.h.Wakeups {
		poll = lock.FixedDelay(time.Minute)
	}
	released := make(chan time.Time, 1)
	releaseErr := make(chan error, 1)
	go func() {
		time.Sleep(hold)
		released <- time.Now()
		releaseErr <- l.Release(ctx)
	}()
	l2, err := b.Acquire(ctx, k, lock.WithRetry(poll))
	got := time.Now()
	if err != nil {
		rerr := errors.New("not returned yet")
		select {
		case rerr = <-releaseErr:
		default:
		}
		t.Fatalf("Acquire while another holder releases after %v: %v (the holder's Release: %v)", hold, err, rerr)
	}
	defer l2.Release(ctx)
	rel := <-released
	if got.Before(rel) {
		t.Fatalf("Acquire succeeded %v before the holder released", rel.Sub(got))
	}
	if s.h.Wakeups {
		if wait := got.Sub(rel); wait > s.h.TTL*4 {
			t.Fatalf("waiter woke %v after the release (its poll interval is a minute): releases are not announced", wait)
		}
	}
}

func (s *suite) acquireCancelled(t *testing.T) {
	ctx := s.ctxFor(t)
	a, b := s.client(t), s.client(t)
	k := key(t, "")
	l := mustAcquire(t, ctx, a, k, lock.WithTTL(time.Minute))

	// Cancel the wait once the first attempt has found the key held (as
	// b's stats show), however long a slow backend took for it.
	wctx, cancel := context.WithCancel(ctx)
	cancelled := make(chan time.Time, 1)
	go func() {
		for b.Stats().Contended == 0 && wctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		cancelled <- time.Now()
		cancel()
	}()
	_, err := b.Acquire(wctx, k, lock.WithRetry(lock.FixedDelay(time.Minute)))
	returned := time.Now()
	cancel() // ends the goroutine, should Acquire have returned on its own
	if !errors.Is(err, context.Canceled) || !errors.Is(err, lock.ErrNotAcquired) {
		t.Errorf("cancelled Acquire = %v, want an error matching context.Canceled and ErrNotAcquired", err)
	}
	if took := returned.Sub(<-cancelled); took > 2*time.Second {
		t.Errorf("cancelled Acquire took %v to return after its context was cancelled", took)
	}

	// An acquisition whose context is already done makes no attempt.
	done, cancelDone := context.WithCancel(ctx)
	cancelDone()
	k2 := key(t, "/2")
	if _, err := b.Acquire(done, k2); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire with a cancelled context = %v, want an error matching context.Canceled", err)
	}

	if err := l.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	assertFree(t, ctx, s.client(t), k, "the cancelled waiter must not leave it held")
	assertFree(t, ctx, s.client(t), k2, "an acquisition with a cancelled context must not take it")
}
