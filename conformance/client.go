package conformance

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/distlock/lock"
)

func (s *suite) stats(t *testing.T) {
	ctx := s.ctxFor(t)
	c, other := s.client(t), s.client(t)
	k := key(t, "")
	l := mustAcquire(t, ctx, c, k)
	if _, err := c.TryAcquire(ctx, k); !errors.Is(err, lock.ErrNotAcquired) {
		t.Fatalf("TryAcquire of a held key = %v, want an error matching ErrNotAcquired", err)
	}
	if s.h.Extend {
		if err := l.Extend(ctx, time.Minute); err != nil {
			t.Fatalf("Extend: %v", err)
		}
	}
	if err := l.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	want := lock.Stats{Acquired: 1, Contended: 1, Released: 1}
	if s.h.Extend {
		want.Extended = 1
	}
	if got := c.Stats(); got != want {
		t.Errorf("Stats() = %+v, want %+v", got, want)
	}
	if got := other.Stats(); got != (lock.Stats{}) {
		t.Errorf("Stats() of an unused client = %+v, want zero", got)
	}
	if err := c.Ping(ctx); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

func (s *suite) close(t *testing.T) {
	ctx := s.ctxFor(t)
	c := s.client(t)
	k := key(t, "")
	l := mustAcquire(t, ctx, c, k)
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	if _, err := c.TryAcquire(ctx, k); !errors.Is(err, lock.ErrClosed) {
		t.Errorf("TryAcquire after Close = %v, want an error matching ErrClosed", err)
	}
	if _, err := c.Acquire(ctx, k); !errors.Is(err, lock.ErrClosed) {
		t.Errorf("Acquire after Close = %v, want an error matching ErrClosed", err)
	}
	if err := c.Do(ctx, k, func(context.Context) error { return nil }); !errors.Is(err, lock.ErrClosed) {
		t.Errorf("Do after Close = %v, want an error matching ErrClosed", err)
	}
	if err := c.Ping(ctx); !errors.Is(err, lock.ErrClosed) {
		t.Errorf("Ping after Close = %v, want an error matching ErrClosed", err)
	}
	if err := l.Release(ctx); !errors.Is(err, lock.ErrClosed) {
		t.Errorf("Release after Close = %v, want an error matching ErrClosed", err)
	}
	// Closing a client does not release its locks: they expire.
	assertHeld(t, ctx, s.client(t), k, "its holder closed its client without releasing it")
}
