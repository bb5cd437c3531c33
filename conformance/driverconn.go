package conformance

import (
	"errors"
	"testing"
	"time"

	"github.com/distlock/lock/driver"
)

// conn returns a raw driver connection that is closed when the test ends,
// or skips the test if the harness has none.
func (s *suite) conn(t *testing.T) driver.Conn {
	t.Helper()
	if s.h.NewConn == nil {
		t.Skip("the harness gives no raw driver connection (Harness.NewConn)")
	}
	c := s.h.NewConn(t)
	if c == nil {
		t.Fatal("conformance: Harness.NewConn returned nil")
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func (s *suite) driverOwnership(t *testing.T) {
	ctx := s.ctxFor(t)
	c := s.conn(t)
	k := key(t, "")
	held := time.Now() // the holder's lease ends no sooner than a TTL from here
	if _, err := c.Acquire(ctx, k, "holder", s.h.TTL); err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	// refused checks that an Acquire by what came after the holder found
	// the key held. It may have taken the key only once the holder's
	// short lease could have run out, on a busy machine (make test: the
	// Valkey fencing run, 500ms, five calls of up to two rounds each); the
	// case can then check no more, and ends.
	refused := func(err error, what string) bool {
		t.Helper()
		switch took := time.Since(held); {
		case errors.Is(err, driver.ErrHeld):
			return true
		case err == nil && took >= s.h.TTL:
			t.Logf("%s = nil %v after the holder's Acquire began (TTL %v): its lease had run out; the case ends here", what, took, s.h.TTL)
			return false
		}
		t.Fatalf("%s = %v, want an error matching driver.ErrHeld", what, err)
		return false
	}
	if _, err := c.Acquire(ctx, k, "other", s.h.TTL); !refused(err, "Acquire of a held key") {
		return
	}
	if err := c.Release(ctx, k, "other"); !errors.Is(err, driver.ErrNotHeld) {
		t.Errorf("Release by a value that does not hold the key = %v, want an error matching driver.ErrNotHeld", err)
	}
	if ext, ok := c.(driver.Extender); ok {
		if err := ext.Extend(ctx, k, "other", time.Hour); !errors.Is(err, driver.ErrNotHeld) {
			t.Errorf("Extend by a value that does not hold the key = %v, want an error matching driver.ErrNotHeld", err)
		}
	}
	if _, err := c.Acquire(ctx, k, "third", s.h.TTL); !refused(err, "Acquire after a non-holder's Release") {
		return
	}
	// The holder's lease must run out on its own schedule, not an hour later.
	deadline := time.Now().Add(s.h.TTL * 8)
	var start time.Time
	for {
		start = time.Now()
		_, err := c.Acquire(ctx, k, "fourth", s.h.TTL)
		if err == nil {
			break
		}
		if !errors.Is(err, driver.ErrHeld) {
			t.Fatalf("Acquire: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the holder's lease outlived its TTL: a non-holder's Extend extended it")
		}
		time.Sleep(s.h.TTL / 10)
	}
	err := c.Release(ctx, k, "fourth")
	switch took := time.Since(start); {
	case err == nil:
	case errors.Is(err, driver.ErrNotHeld) && took >= s.h.TTL:
		// The short lease ran out before its release, on a busy machine
		// (make test: redigo with fencing, two rounds to acquire).
		t.Logf("Release by the holder %v after its Acquire began: %v (the lease had run out)", took, err)
	default:
		t.Errorf("Release by the holder, %v after its Acquire began (TTL %v): %v", took, s.h.TTL, err)
	}
}

func (s *suite) driverNoRevival(t *testing.T) {
	ctx := s.ctxFor(t)
	c := s.conn(t)
	ext, ok := c.(driver.Extender)
	if !ok {
		t.Skip("the driver cannot extend leases")
	}
	k := key(t, "")
	if _, err := c.Acquire(ctx, k, "holder", s.h.TTL); err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	time.Sleep(s.h.TTL * 2)
	if err := ext.Extend(ctx, k, "holder", time.Hour); !errors.Is(err, driver.ErrNotHeld) {
		t.Errorf("Extend of an expired lease = %v, want an error matching driver.ErrNotHeld", err)
	}
	if _, err := c.Acquire(ctx, k, "next", s.h.TTL); err != nil {
		t.Errorf("Acquire after a refused Extend of an expired lease = %v: it was revived", err)
	}
}

func (s *suite) driverTransfer(t *testing.T) {
	ctx := s.ctxFor(t)
	c := s.conn(t)
	tr, ok := c.(driver.Transferer)
	if !ok {
		t.Skip("the driver cannot transfer leases")
	}
	k := key(t, "")
	first, err := c.Acquire(ctx, k, "holder", s.h.TTL)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if _, err := tr.Transfer(ctx, k, "other", "thief", s.h.TTL); !errors.Is(err, driver.ErrNotHeld) {
		t.Errorf("Transfer by a value that does not hold the key = %v, want an error matching driver.ErrNotHeld", err)
	}
	if err := c.Release(ctx, k, "thief"); !errors.Is(err, driver.ErrNotHeld) {
		t.Errorf("a refused Transfer gave the key away: Release by its target = %v, want driver.ErrNotHeld", err)
	}
	second, err := tr.Transfer(ctx, k, "holder", "next", s.h.TTL)
	if err != nil {
		t.Fatalf("Transfer by the holder: %v", err)
	}
	if s.h.Fencing && (!second.Fenced || second.Token <= first.Token) {
		t.Errorf("token after Transfer = %+v, want greater than %+v", second, first)
	}
	if _, err := c.Acquire(ctx, k, "third", s.h.TTL); !errors.Is(err, driver.ErrHeld) {
		t.Errorf("Acquire right after a Transfer = %v, want driver.ErrHeld: the key must never be free in between", err)
	}
	if err := c.Release(ctx, k, "holder"); !errors.Is(err, driver.ErrNotHeld) {
		t.Errorf("Release by the former holder after a Transfer = %v, want driver.ErrNotHeld", err)
	}
	// The new lease expires on its own schedule, and then cannot be
	// transferred.
	time.Sleep(s.h.TTL * 2)
	if _, err := tr.Transfer(ctx, k, "next", "late", time.Hour); !errors.Is(err, driver.ErrNotHeld) {
		t.Errorf("Transfer of an expired lease = %v, want an error matching driver.ErrNotHeld", err)
	}
	third, err := c.Acquire(ctx, k, "fourth", s.h.TTL)
	if err != nil {
		t.Fatalf("Acquire after the transferred lease expired: %v", err)
	}
	if s.h.Fencing && third.Token <= second.Token {
		t.Errorf("token after the transferred lease = %d, want greater than %d", third.Token, second.Token)
	}
	if err := c.Release(ctx, k, "fourth"); err != nil {
		t.Errorf("Release: %v", err)
	}
}

// driverTransferLease checks driver.LeaseTransferer as driverTransfer
// checks Transfer: the holder's lease passes the key on, in one step, and
// a lease that is no longer the key's passes nothing.
func (s *suite) driverTransferLease(t *testing.T) {
	ctx := s.ctxFor(t)
	c := s.conn(t)
	tr, ok := c.(driver.LeaseTransferer)
	if !ok {
		t.Skip("the driver transfers no leases it is handed")
	}
	k := key(t, "")
	first, err := c.Acquire(ctx, k, "holder", s.h.TTL)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	second, err := tr.TransferLease(ctx, k, "holder", first, "next", s.h.TTL)
	if err != nil {
		t.Fatalf("TransferLease by the holder: %v", err)
	}
	if s.h.Fencing && (!second.Fenced || second.Token <= first.Token) {
		t.Errorf("token after TransferLease = %+v, want greater than %+v", second, first)
	}
	if _, err := c.Acquire(ctx, k, "third", s.h.TTL); !errors.Is(err, driver.ErrHeld) {
		t.Errorf("Acquire right after a TransferLease = %v, want driver.ErrHeld: the key must never be free in between", err)
	}
	if _, err := tr.TransferLease(ctx, k, "holder", first, "thief", s.h.TTL); !errors.Is(err, driver.ErrNotHeld) {
		t.Errorf("TransferLease of a lease already passed on = %v, want an error matching driver.ErrNotHeld", err)
	}
	third, err := tr.TransferLease(ctx, k, "next", second, "last", s.h.TTL)
	if err != nil {
		t.Fatalf("TransferLease by the new holder: %v", err)
	}
	if s.h.Fencing && third.Token <= second.Token {
		t.Errorf("token after a second TransferLease = %d, want greater than %d", third.Token, second.Token)
	}
	if err := c.Release(ctx, k, "thief"); !errors.Is(err, driver.ErrNotHeld) {
		t.Errorf("a refused TransferLease gave the key away: Release by its target = %v, want driver.ErrNotHeld", err)
	}
	if err := c.Release(ctx, k, "last"); err != nil {
		t.Errorf("Release by the last holder: %v", err)
	}
}
