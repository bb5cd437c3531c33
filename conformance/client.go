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
	c, other := s.client(t), s.client(t)
	k := key(t, "")
	l := mustAcquire(t, ctx, c, k)
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// Close released the lock. So the key is free to others at once, in
	// one attempt.
	assertFree(t, ctx, other, k, "its holder's client was closed, which releases it")
	select {
	case <-l.Done():
	default:
		t.Error("Done of a lock that Close released is not closed")
	}
	if err := l.Err(); !errors.Is(err, lock.ErrClosed) {
		t.Errorf("Err of a lock that Close released = %v, want an error matching ErrClosed", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Errorf("Release of a lock that Close released = %v, want nil", err)
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
	if err := l.Extend(ctx, time.Minute); !errors.Is(err, lock.ErrClosed) {
		t.Errorf("Extend after Close = %v, want an error matching ErrClosed", err)
	}
}

// closeLetsGo closes a client while it runs Do and holds another lock,
// and while one of its calls waits for a key. Do's function must then be
// cancelled with ErrClosed, and the waiting call must end. Both keys must
// be free to another client as soon as Close returns.
func (s *suite) closeLetsGo(t *testing.T) {
	ctx := s.ctxFor(t)
	c, other := s.client(t), s.client(t)
	kDo, kHeld, kWaited := key(t, "/do"), key(t, "/held"), key(t, "/waited")
	mustAcquire(t, ctx, c, kHeld)
	blocker := mustAcquire(t, ctx, other, kWaited)
	defer blocker.Release(ctx)

	running := make(chan struct{})
	cause := make(chan error, 1)
	did := make(chan error, 1)
	go func() {
		did <- c.Do(ctx, kDo, func(fctx context.Context) error {
			close(running)
			<-fctx.Done()
			cause <- context.Cause(fctx)
			return fctx.Err()
		})
	}()
	waited := make(chan error, 1)
	go func() {
		_, err := c.Acquire(ctx, kWaited, lock.WithRetry(lock.FixedDelay(time.Minute)))
		waited <- err
	}()
	select {
	case <-running:
	case <-ctx.Done():
		t.Fatal("Do's function did not start")
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	assertFree(t, ctx, other, kDo, "the client running Do on it was closed")
	assertFree(t, ctx, other, kHeld, "the client holding it was closed")
	for what, ch := range map[string]chan error{"Do's function's context cause": cause, "Do": did, "the waiting Acquire": waited} {
		select {
		case err := <-ch:
			if !errors.Is(err, lock.ErrClosed) {
				t.Errorf("%s after Close = %v, want an error matching ErrClosed", what, err)
			}
		case <-ctx.Done():
			t.Fatalf("%s did not end after Close", what)
		}
	}
}

// doneAtValidity checks that a lock's Done is closed once its validity
// passes without an extension, and not before.
func (s *suite) doneAtValidity(t *testing.T) {
	ctx := s.ctxFor(t)
	c := s.client(t)
	l := mustAcquire(t, ctx, c, key(t, ""), lock.WithTTL(s.h.TTL))
	if err := l.Err(); err != nil {
		t.Fatalf("Err of a lock just acquired = %v, want nil", err)
	}
	select {
	case <-l.Done():
		t.Fatal("Done closed before the lock's validity passed")
	case <-time.After(time.Until(l.ValidUntil()) - s.h.TTL/10):
	}
	select {
	case <-l.Done():
		if late := time.Since(l.ValidUntil()); late > s.h.TTL/2 {
			t.Errorf("Done closed %v after ValidUntil", late)
		}
	case <-ctx.Done():
		t.Fatal("Done not closed after the lock's validity passed")
	}
	if err := l.Err(); !errors.Is(err, lock.ErrLost) {
		t.Errorf("Err of a lock whose validity passed = %v, want an error matching ErrLost", err)
	}
	l.Release(ctx) // the backend may still keep it: the drift allowance
}

// doneAtRelease checks that Release closes Done, and that a lock kept
// alive outlives its TTL.
func (s *suite) doneAtRelease(t *testing.T) {
	ctx := s.ctxFor(t)
	c := s.client(t)
	l := mustAcquire(t, ctx, c, key(t, ""), lock.WithTTL(s.h.TTL))
	done := l.Done()
	if s.h.Extend {
		stop := l.KeepAlive()
		time.Sleep(2 * s.h.TTL)
		select {
		case <-done:
			t.Fatalf("Done closed while the lock was kept alive: %v", l.Err())
		default:
		}
		stop()
	}
	if err := l.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	select {
	case <-done:
	default:
		t.Fatal("Done not closed by Release")
	}
	if err := l.Err(); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Err of a released lock = %v, want an error matching ErrNotHeld", err)
	}
}

// inspect checks Client.Inspect where the driver supports it. It checks
// the holder's ID, token and time left, and that nobody holds the key once
// the lock is released.
func (s *suite) inspect(t *testing.T) {
	ctx := s.ctxFor(t)
	c, other := s.client(t), s.client(t)
	k := key(t, "")
	if _, _, err := other.Inspect(ctx, k); errors.Is(err, errors.ErrUnsupported) {
		t.Skip("the driver cannot tell who holds a key")
	} else if err != nil {
		t.Fatalf("Inspect of a key never used: %v", err)
	}
	ttl := 10 * time.Second
	l := mustAcquire(t, ctx, c, k, lock.WithTTL(ttl))
	h, held, err := other.Inspect(ctx, k)
	if err != nil || !held {
		t.Fatalf("Inspect of a held key = %+v, %v, %v", h, held, err)
	}
	tok, fenced := l.Token()
	if h.ID != l.ID() || h.Token != tok || h.Fenced != fenced {
		t.Errorf("Inspect = %+v, want ID %q, token %v (fenced %v)", h, l.ID(), tok, fenced)
	}
	if h.TTL <= 0 || h.TTL > ttl {
		t.Errorf("Inspect's TTL = %v, want in (0, %v]", h.TTL, ttl)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if h, held, err := other.Inspect(ctx, k); err != nil || held {
		t.Errorf("Inspect of a released key = %+v, %v, %v; want nobody", h, held, err)
	}
}
