package conformance

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/distlock/lock"
)

func (s *suite) acquireRelease(t *testing.T) {
	ctx := s.ctxFor(t)
	c := s.client(t)
	k := key(t, "")
	const ttl = 10 * time.Second
	before := time.Now()
	l, err := c.Acquire(ctx, k, lock.WithTTL(ttl))
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	after := time.Now()
	if l.Key() != k {
		t.Errorf("Key() = %q, want %q", l.Key(), k)
	}
	// The core's clock reading comes after connecting, so only the time
	// Acquire returned bounds it from above.
	if vu := l.ValidUntil(); !vu.After(after) || vu.After(after.Add(ttl)) {
		t.Errorf("ValidUntil() is %v after Acquire returned (which took %v); want in (0, %v]", vu.Sub(after), after.Sub(before), ttl)
	}
	tok, fenced := l.Token()
	if fenced != s.h.Fencing {
		t.Errorf("Token() fenced = %v, want %v (Harness.Fencing)", fenced, s.h.Fencing)
	}
	if fenced && tok.IsZero() {
		t.Errorf("Token() = 0, a token that is never issued")
	}
	if err := l.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if vu := l.ValidUntil(); vu.After(time.Now()) {
		t.Errorf("ValidUntil() is in the future after Release")
	}
	if err := l.Release(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("second Release = %v, want an error matching ErrNotHeld", err)
	}
	assertFree(t, ctx, s.client(t), k, "it was released")
}

func (s *suite) tryAcquireHeld(t *testing.T) {
	ctx := s.ctxFor(t)
	a, b := s.client(t), s.client(t)
	k := key(t, "")
	l := mustAcquire(t, ctx, a, k)
	assertHeld(t, ctx, b, k, "another client holds it")
	assertHeld(t, ctx, a, k, "a lock is not reentrant: the same client holds it")
	if err := l.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	assertFree(t, ctx, b, k, "its holder released it")
}

// staleHandle returns a lock handle whose lease has run out, and a live
// lock on the same key held through another client.
func (s *suite) staleHandle(t *testing.T, ctx context.Context, k string) (stale, live *lock.Lock, liveClient *lock.Client) {
	t.Helper()
	a, b := s.client(t), s.client(t)
	stale = mustAcquire(t, ctx, a, k, lock.WithTTL(s.h.TTL))
	live, err := b.Acquire(ctx, k, lock.WithTTL(s.h.TTL), lock.WithRetry(lock.FixedDelay(s.h.TTL/10)))
	if err != nil {
		t.Fatalf("Acquire after the first holder's lease ran out: %v", err)
	}
	return stale, live, b
}

func (s *suite) releaseNotOwner(t *testing.T) {
	ctx := s.ctxFor(t)
	k := key(t, "")
	stale, live, _ := s.staleHandle(t, ctx, k)
	if err := stale.Release(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Release by a former holder = %v, want an error matching ErrNotHeld", err)
	}
	assertHeld(t, ctx, s.client(t), k, "a former holder's Release must not free the current holder's lock")
	if err := live.Release(ctx); err != nil {
		t.Errorf("Release by the holder after a former holder's attempt: %v", err)
	}
}

func (s *suite) extendNotOwner(t *testing.T) {
	if !s.h.Extend {
		t.Skip("the driver cannot extend leases")
	}
	ctx := s.ctxFor(t)
	k := key(t, "")
	stale, live, _ := s.staleHandle(t, ctx, k)
	if err := stale.Extend(ctx, time.Hour); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Extend by a former holder = %v, want an error matching ErrNotHeld", err)
	}
	// The live lock must still expire on its own schedule.
	other := s.client(t)
	deadline := live.ValidUntil().Add(s.h.TTL * 4)
	for {
		l, err := other.TryAcquire(ctx, k)
		if err == nil {
			l.Release(ctx)
			return
		}
		if !errors.Is(err, lock.ErrNotAcquired) {
			t.Fatalf("TryAcquire: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the holder's lock outlived its TTL: a former holder's Extend extended it")
		}
		time.Sleep(s.h.TTL / 10)
	}
}

func (s *suite) expiry(t *testing.T) {
	ctx := s.ctxFor(t)
	a, b := s.client(t), s.client(t)
	k := key(t, "")
	l := mustAcquire(t, ctx, a, k, lock.WithTTL(s.h.TTL))
	assertHeld(t, ctx, b, k, "its holder has just taken it")
	// a vanishes. It neither releases nor extends.
	wctx, cancel := context.WithTimeout(ctx, s.h.TTL*8)
	defer cancel()
	l2, err := b.Acquire(wctx, k, lock.WithRetry(lock.FixedDelay(s.h.TTL/10)))
	got := time.Now()
	if err != nil {
		t.Fatalf("Acquire of a vanished holder's key after %v (its TTL is %v): %v", s.h.TTL*8, s.h.TTL, err)
	}
	defer l2.Release(ctx)
	if got.Before(l.ValidUntil()) {
		t.Fatalf("the key was taken %v before its first holder's validity ran out", l.ValidUntil().Sub(got))
	}
}

func (s *suite) extendKeeps(t *testing.T) {
	ctx := s.ctxFor(t)
	c := s.client(t)
	// The second client is opened, and pinged until it answers, before
	// the lock is taken: inside the lease it ate into the first TTL/3 (a
	// Redlock client dials every node), and under load, with a TTL of
	// 500ms, Extend #1 found the validity gone.
	other := s.client(t)
	k := key(t, "")
	l := mustAcquire(t, ctx, c, k, lock.WithTTL(s.h.TTL))
	if !s.h.Extend {
		if err := l.Extend(ctx, s.h.TTL); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("Extend on a driver that cannot extend = %v, want an error matching errors.ErrUnsupported", err)
		}
		return
	}
	first := l.ValidUntil()
	for i := 0; i < 4; i++ {
		time.Sleep(s.h.TTL / 3)
		if err := l.Extend(ctx, s.h.TTL); err != nil {
			t.Fatalf("Extend #%d: %v", i+1, err)
		}
	}
	if !l.ValidUntil().After(first) {
		t.Fatalf("ValidUntil did not move forward after Extend")
	}
	if !time.Now().After(first) {
		t.Fatalf("test too slow to tell: the first lease has not run out yet")
	}
	assertHeld(t, ctx, other, k, "its lease was extended past the first TTL")
	if err := l.Release(ctx); err != nil {
		t.Fatalf("Release after Extend: %v", err)
	}
	assertFree(t, ctx, other, k, "it was released")
}

func (s *suite) extendAfterExpiry(t *testing.T) {
	if !s.h.Extend {
		t.Skip("the driver cannot extend leases")
	}
	ctx := s.ctxFor(t)
	c := s.client(t)
	k := key(t, "")
	l := mustAcquire(t, ctx, c, k, lock.WithTTL(s.h.TTL))
	time.Sleep(time.Until(l.ValidUntil()) + s.h.TTL/2)
	if err := l.Extend(ctx, time.Hour); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("Extend after the lease ran out = %v, want an error matching ErrNotHeld", err)
	}
	// An expired lease is never revived.
	other := s.client(t)
	l2, err := other.Acquire(ctx, k, lock.WithRetry(lock.FixedDelay(s.h.TTL/10)))
	if err != nil {
		t.Fatalf("Acquire after a refused Extend: %v", err)
	}
	l2.Release(ctx)
}
