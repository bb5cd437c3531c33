package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"testing"
	"time"

	"github.com/distlock/lock/driver"
)

// dropTimeout bounds the Drop that cleans up after a failed case.
const dropTimeout = 10 * time.Second

// scratchConn opens a connection on the scratch namespace name through
// Harness.NewScratchConn, or skips the test if the harness has none.
func (s *suite) scratchConn(t *testing.T, name string) (driver.Conn, driver.Dropper, driver.Inspector) {
	t.Helper()
	if s.h.NewScratchConn == nil {
		t.Skip("the harness opens no scratch namespaces (Harness.NewScratchConn)")
	}
	c := s.h.NewScratchConn(t, name)
	if c == nil {
		t.Fatal("conformance: Harness.NewScratchConn returned nil")
	}
	t.Cleanup(func() { c.Close() })
	d, ok := c.(driver.Dropper)
	if !ok {
		t.Fatalf("conformance: a scratch connection (%T) is no driver.Dropper", c)
	}
	in, ok := c.(driver.Inspector)
	if !ok {
		t.Fatalf("conformance: a scratch connection (%T) is no driver.Inspector", c)
	}
	return c, d, in
}

// scratchName returns a namespace name no other test uses.
func scratchName() string {
	var b [6]byte
	rand.Read(b[:])
	return "dlscratch_" + hex.EncodeToString(b[:])
}

// dropScratch checks driver.Dropper: a Drop takes every key of the
// namespace with it, held ones included, and may be called twice. A
// connection opened afterwards on the same name finds nothing, and takes
// a key that was held an hour. The old holder can neither release nor
// extend the new holder's lock. Tokens may start again after a Drop, so a
// dropped scratch namespace must never be reused where tokens matter.
func (s *suite) dropScratch(t *testing.T) {
	ctx := s.ctxFor(t)
	name := scratchName()
	old, drop, _ := s.scratchConn(t, name)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), dropTimeout)
		defer cancel()
		if err := drop.Drop(ctx); err != nil {
			t.Errorf("Drop at the end of the case: %v", err)
		}
	})
	keys := []string{key(t, "/held"), key(t, "/released"), key(t, "/other")}
	var first driver.Lease
	for i, k := range keys {
		l, err := old.Acquire(ctx, k, "before"+strconv.Itoa(i), time.Hour)
		if err != nil {
			t.Fatalf("Acquire(%q): %v", k, err)
		}
		if i == 0 {
			first = l
		}
	}
	if err := old.Release(ctx, keys[1], "before1"); err != nil {
		t.Fatalf("Release(%q): %v", keys[1], err)
	}
	if err := drop.Drop(ctx); err != nil {
		t.Fatalf("Drop: %v", err)
	}
	if err := drop.Drop(ctx); err != nil {
		t.Fatalf("a second Drop: %v", err)
	}

	fresh, _, in := s.scratchConn(t, name)
	for _, k := range keys {
		if h, held, err := in.Inspect(ctx, k); err != nil || held {
			t.Errorf("Inspect(%q) after Drop = %+v, %v, %v; want nobody", k, h, held, err)
		}
	}
	next, err := fresh.Acquire(ctx, keys[0], "after", s.h.TTL*4)
	if err != nil {
		t.Fatalf("Acquire of a key held for an hour before Drop: %v", err)
	}
	if s.h.Fencing {
		t.Logf("token before Drop %d, after %d (tokens may start again)", first.Token, next.Token)
	}
	if err := old.Release(ctx, keys[0], "before0"); err == nil {
		t.Errorf("Release by the holder from before Drop succeeded, want an error")
	}
	if ext, ok := old.(driver.Extender); ok {
		if err := ext.Extend(ctx, keys[0], "before0", time.Hour); err == nil {
			t.Errorf("Extend by the holder from before Drop succeeded, want an error")
		}
	}
	h, held, err := in.Inspect(ctx, keys[0])
	if err != nil || !held || h.Value != "after" {
		t.Errorf("Inspect after the old holder's attempts = %+v, %v, %v; want held by the new holder", h, held, err)
	}
	if err := fresh.Release(ctx, keys[0], "after"); err != nil {
		t.Errorf("Release by the new holder: %v", err)
	}
	if err := drop.Drop(ctx); err != nil {
		t.Errorf("Drop of a namespace made again: %v", err)
	}
}
