package conformance

import (
	"testing"
	"time"

	"github.com/distlock/lock"
)

func (s *suite) tokensIncrease(t *testing.T) {
	if !s.h.Fencing {
		t.Skip("the driver issues no fencing tokens")
	}
	ctx := s.ctxFor(t)
	clients := []*lock.Client{s.client(t), s.client(t), s.client(t)}
	k, k2 := key(t, ""), key(t, "/2")
	var last uint64
	for i := 0; i < 12; i++ {
		c := clients[i%len(clients)]
		// Interleave another key, whose acquisitions must not matter.
		l2 := mustAcquire(t, ctx, c, k2)
		l := mustAcquire(t, ctx, c, k)
		tok, ok := l.Token()
		if !ok {
			t.Fatal("Token() reports no token from a fenced driver")
		}
		if uint64(tok) <= last {
			t.Fatalf("acquisition #%d got token %v after token %d", i+1, tok, last)
		}
		last = uint64(tok)
		if i%3 == 2 {
			// Let it expire instead of releasing it.
			l.Extend(ctx, lock.MinTTL)
			time.Sleep(2 * lock.MinTTL)
			l.Release(ctx)
		} else if err := l.Release(ctx); err != nil {
			t.Fatalf("Release: %v", err)
		}
		l2.Release(ctx)
	}
}
