package conformance

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/distlock/lock"
)

func (s *suite) doReleases(t *testing.T) {
	ctx := s.ctxFor(t)
	c := s.client(t)
	k := key(t, "")
	other := s.client(t)
	boom := errors.New("boom")
	ran := false
	err := c.Do(ctx, k, func(fctx context.Context) error {
		ran = true
		l := lock.FromContext(fctx)
		if l == nil || l.Key() != k {
			t.Errorf("FromContext in Do's function = %v, want the lock on %q", l, k)
		}
		assertHeld(t, ctx, other, k, "Do's function is running")
		return boom
	})
	if !ran {
		t.Fatal("Do did not run its function")
	}
	if !errors.Is(err, boom) {
		t.Errorf("Do = %v, want the function's error", err)
	}
	assertFree(t, ctx, other, k, "Do has returned")
}

func (s *suite) doExtends(t *testing.T) {
	if !s.h.Extend {
		t.Skip("the driver cannot extend leases")
	}
	ctx := s.ctxFor(t)
	c, other := s.client(t), s.client(t)
	k := key(t, "")
	err := c.Do(ctx, k, func(fctx context.Context) error {
		end := time.Now().Add(3 * s.h.TTL)
		for time.Now().Before(end) {
			select {
			case <-fctx.Done():
				t.Errorf("Do cancelled its function while extension should have kept the lock: %v", context.Cause(fctx))
				return nil
			case <-time.After(s.h.TTL / 4):
			}
			assertHeld(t, ctx, other, k, "Do keeps extending it")
		}
		return nil
	}, lock.WithTTL(s.h.TTL))
	if err != nil {
		t.Errorf("Do: %v", err)
	}
	assertFree(t, ctx, other, k, "Do has returned")
}

func (s *suite) doCancelsOnLoss(t *testing.T) {
	ctx := s.ctxFor(t)
	c := s.client(t)
	k := key(t, "")
	start := time.Now()
	err := c.Do(ctx, k, func(fctx context.Context) error {
		if s.h.Extend {
			// Lose the lock behind the keeper's back, so that its next
			// extension is refused.
			if err := lock.FromContext(fctx).Release(ctx); err != nil {
				t.Errorf("Release inside Do: %v", err)
			}
		}
		select {
		case <-fctx.Done():
		case <-time.After(s.h.TTL * 8):
			t.Errorf("Do did not cancel its function %v after the lock was lost", s.h.TTL*8)
			return nil
		}
		if cause := context.Cause(fctx); !errors.Is(cause, lock.ErrLost) {
			t.Errorf("cause of the function's context = %v, want an error matching ErrLost", cause)
		}
		return nil
	}, lock.WithTTL(s.h.TTL))
	if !errors.Is(err, lock.ErrLost) {
		t.Errorf("Do after the lock was lost = %v, want an error matching ErrLost", err)
	}
	if took := time.Since(start); took > s.h.TTL*4 {
		t.Errorf("Do noticed the loss only after %v (TTL %v)", took, s.h.TTL)
	}
}
