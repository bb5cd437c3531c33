package conformance

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock"
)

// semaphoreCases are the cases of lock.Semaphore, which the core builds
// on every driver's plain locks.
func (s *suite) semaphoreCases() []testCase {
	return []testCase{
		{"Semaphore_atMostN", s.semaphoreAtMostN},
		{"Semaphore_expiryFreesSlot", s.semaphoreExpiry},
		{"Semaphore_sizeMismatch", s.semaphoreSizeMismatch},
		{"Semaphore_waitWakes", s.semaphoreWaitWakes},
	}
}

// semaphore returns c's semaphore of n named name, or fails the test.
// It skips the test on a driver that cannot tell who holds a key, which
// a semaphore needs.
func semaphore(t *testing.T, c *lock.Client, name string, n int) *lock.Semaphore {
	t.Helper()
	if _, _, err := c.Inspect(t.Context(), name); errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("the driver cannot tell who holds a key, which a semaphore needs: %v", err)
	}
	sem, err := c.Semaphore(name, n)
	if err != nil {
		t.Fatalf("Semaphore(%q, %d): %v", name, n, err)
	}
	return sem
}

// semaphoreAtMostN runs goroutines over clients, each taking a permit of
// a semaphore of 3 in turn, and checks that no more than 3 holdings
// overlap, and that each slot is a lock.
func (s *suite) semaphoreAtMostN(t *testing.T) {
	const n, goroutines, each = 3, 6, 8
	ctx := s.ctxFor(t)
	name := key(t, "")
	clients := []*lock.Client{s.client(t), s.client(t), s.client(t)}
	var h History
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		sem := semaphore(t, clients[g%len(clients)], name, n)
		wg.Go(func() {
			for i := range each {
				l, err := sem.Acquire(ctx, lock.WithTTL(10*time.Second), lock.WithRetry(lock.ExponentialBackoff(time.Millisecond, 20*time.Millisecond)))
				if err != nil {
					errs <- err
					return
				}
				got := time.Now()
				if !got.Before(l.ValidUntil()) {
					errs <- fmt.Errorf("Acquire returned a permit whose validity had passed %v before", got.Sub(l.ValidUntil()))
					return
				}
				time.Sleep(time.Duration(1+i%3) * time.Millisecond)
				h.Hold(l, got)
				if err := l.Release(ctx); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("contender: %v", err)
	}
	if err := h.CheckPermits(n, s.h.Fencing); err != nil {
		t.Error(err)
	}
	if want := goroutines * each; h.Len() != want && !t.Failed() {
		t.Errorf("%d holdings recorded, want %d", h.Len(), want)
	}
}

// semaphoreExpiry checks that a permit whose holder vanished frees its
// slot after its TTL, and not before its validity.
func (s *suite) semaphoreExpiry(t *testing.T) {
	ctx := s.ctxFor(t)
	a, b := s.client(t), s.client(t)
	name := key(t, "")
	sa, sb := semaphore(t, a, name, 1), semaphore(t, b, name, 1)
	l, err := sa.TryAcquire(ctx, lock.WithTTL(s.h.TTL))
	if err != nil {
		t.Fatalf("TryAcquire of a free semaphore: %v", err)
	}
	if _, err := sb.TryAcquire(ctx); !errors.Is(err, lock.ErrNotAcquired) {
		t.Fatalf("TryAcquire while the only permit is held = %v, want an error matching ErrNotAcquired", err)
	}
	// a vanishes. It neither releases nor extends.
	wctx, cancel := context.WithTimeout(ctx, s.h.TTL*8)
	defer cancel()
	l2, err := sb.Acquire(wctx, lock.WithRetry(lock.FixedDelay(s.h.TTL/10)))
	got := time.Now()
	if err != nil {
		t.Fatalf("Acquire of a vanished holder's permit after %v (its TTL is %v): %v", s.h.TTL*8, s.h.TTL, err)
	}
	defer l2.Release(ctx)
	if got.Before(l.ValidUntil()) {
		t.Fatalf("the permit was taken %v before its first holder's validity ran out", l.ValidUntil().Sub(got))
	}
	if l2.Key() != l.Key() {
		t.Errorf("the new permit is on %q, want the one slot %q", l2.Key(), l.Key())
	}
}

// semaphoreSizeMismatch checks that a client asking for another size is
// refused while a permit is held, at once, and that the name takes any
// size once the permits are gone.
func (s *suite) semaphoreSizeMismatch(t *testing.T) {
	ctx := s.ctxFor(t)
	a, b := s.client(t), s.client(t)
	name := key(t, "")
	two, three := semaphore(t, a, name, 2), semaphore(t, b, name, 3)
	l, err := two.TryAcquire(ctx, lock.WithTTL(time.Minute))
	if err != nil {
		t.Fatalf("TryAcquire of a free semaphore: %v", err)
	}
	for range 3 { // the first slot tried is random
		if _, err := three.TryAcquire(ctx); !errors.Is(err, lock.ErrSizeMismatch) {
			t.Fatalf("TryAcquire of a semaphore of 3 while one of 2 holds a permit = %v, want an error matching ErrSizeMismatch", err)
		}
	}
	start := time.Now()
	if _, err := three.Acquire(ctx, lock.WithRetry(lock.FixedDelay(time.Minute))); !errors.Is(err, lock.ErrSizeMismatch) {
		t.Fatalf("Acquire of a semaphore of 3 while one of 2 holds a permit = %v, want an error matching ErrSizeMismatch", err)
	}
	if d := time.Since(start); d > s.h.TTL*4 {
		t.Errorf("Acquire took %v to refuse a mismatch, want it at once", d)
	}
	// The refused grants were given back: the semaphore of 2 has its second permit.
	l2, err := two.TryAcquire(ctx)
	if err != nil {
		t.Fatalf("the second permit of 2, after the refused grants of a semaphore of 3: %v", err)
	}
	for _, p := range []*lock.Lock{l, l2} {
		if err := p.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	l3, err := three.TryAcquire(ctx)
	if err != nil {
		t.Fatalf("TryAcquire of a semaphore of 3 once the permits of 2 were released: %v", err)
	}
	l3.Release(ctx)
}

// semaphoreWaitWakes checks that a waiter for a full semaphore gets the
// permit its holder releases, and, with wake-ups, without polling.
func (s *suite) semaphoreWaitWakes(t *testing.T) {
	ctx := s.ctxFor(t)
	a, b := s.client(t), s.client(t)
	name := key(t, "")
	full := semaphore(t, a, name, 2)
	var held []*lock.Lock
	for range 2 {
		l, err := full.TryAcquire(ctx, lock.WithTTL(time.Minute))
		if err != nil {
			t.Fatalf("TryAcquire of a free permit: %v", err)
		}
		held = append(held, l)
	}
	defer held[0].Release(ctx)
	poll := lock.FixedDelay(s.h.TTL / 10)
	if s.h.Wakeups {
		poll = lock.FixedDelay(time.Minute)
	}
	released := make(chan time.Time, 1)
	go func() {
		time.Sleep(s.h.TTL / 2)
		released <- time.Now()
		if err := held[1].Release(ctx); err != nil {
			t.Errorf("Release: %v", err)
		}
	}()
	l, err := semaphore(t, b, name, 2).Acquire(ctx, lock.WithRetry(poll))
	got := time.Now()
	if err != nil {
		t.Fatalf("Acquire while a holder releases: %v", err)
	}
	defer l.Release(ctx)
	rel := <-released
	if got.Before(rel) {
		t.Fatalf("Acquire succeeded %v before the holder released", rel.Sub(got))
	}
	if l.Key() != held[1].Key() {
		t.Errorf("the waiter's permit is on %q, want the released slot %q", l.Key(), held[1].Key())
	}
	if s.h.Wakeups {
		if wait := got.Sub(rel); wait > s.h.TTL*4 {
			t.Fatalf("waiter woke %v after the release (its poll interval is a minute): releases of slots are not heard", wait)
		}
	}
}
