package conformance

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
)

func (s *suite) badInput(t *testing.T) {
	ctx := s.ctxFor(t)
	c := s.client(t)
	k := key(t, "")
	nop := func(context.Context) error { return nil }
	cases := []struct {
		name string
		key  string
		opts []lock.Option
		want error
	}{
		{"emptyKey", "", nil, lock.ErrInvalidKey},
		{"longKey", strings.Repeat("k", lock.MaxKeyLen+1), nil, lock.ErrInvalidKey},
		{"hugeKey", strings.Repeat("k", 10<<20), nil, lock.ErrInvalidKey},
		{"invalidUTF8", "k\xff", nil, lock.ErrInvalidKey},
		{"nulInKey", "k\x00", nil, lock.ErrInvalidKey},
		{"zeroTTL", k, []lock.Option{lock.WithTTL(0)}, lock.ErrInvalidTTL},
		{"negativeTTL", k, []lock.Option{lock.WithTTL(-time.Second)}, lock.ErrInvalidTTL},
		{"tinyTTL", k, []lock.Option{lock.WithTTL(time.Millisecond)}, lock.ErrInvalidTTL},
		{"hugeTTL", k, []lock.Option{lock.WithTTL(math.MaxInt64)}, lock.ErrInvalidTTL},
		{"nilOption", k, []lock.Option{nil}, lock.ErrInvalidOption},
		{"nilRetry", k, []lock.Option{lock.WithRetry(nil)}, lock.ErrInvalidOption},
		{"zeroDelay", k, []lock.Option{lock.WithRetry(lock.FixedDelay(0))}, lock.ErrInvalidOption},
		{"backwardBackoff", k, []lock.Option{lock.WithRetry(lock.ExponentialBackoff(time.Second, time.Millisecond))}, lock.ErrInvalidOption},
		{"zeroAttempts", k, []lock.Option{lock.WithRetry(lock.LimitAttempts(lock.NoRetry(), 0))}, lock.ErrInvalidOption},
		{"hugeDrift", k, []lock.Option{lock.WithDriftFactor(0.5)}, lock.ErrInvalidOption},
		{"nanDrift", k, []lock.Option{lock.WithDriftFactor(math.NaN())}, lock.ErrInvalidOption},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.TryAcquire(ctx, tc.key, tc.opts...); !errors.Is(err, tc.want) {
				t.Errorf("TryAcquire = %v, want an error matching %v", err, tc.want)
			}
			if _, err := c.Acquire(ctx, tc.key, tc.opts...); !errors.Is(err, tc.want) {
				t.Errorf("Acquire = %v, want an error matching %v", err, tc.want)
			}
			if err := c.Do(ctx, tc.key, nop, tc.opts...); !errors.Is(err, tc.want) {
				t.Errorf("Do = %v, want an error matching %v", err, tc.want)
			}
			if len(tc.key) > 1000 {
				_, err := c.TryAcquire(ctx, tc.key, tc.opts...)
				if n := len(err.Error()); n > 1000 {
					t.Errorf("the error for a %d-byte key is %d bytes long; it should not repeat the key", len(tc.key), n)
				}
			}
		})
	}
	if err := c.Do(ctx, k, nil); !errors.Is(err, lock.ErrInvalidOption) {
		t.Errorf("Do with a nil function = %v, want an error matching ErrInvalidOption", err)
	}
	assertFree(t, ctx, c, k, "only bad calls were made")

	l := mustAcquire(t, ctx, c, k)
	for _, ttl := range []time.Duration{0, -1, time.Millisecond, math.MaxInt64} {
		if err := l.Extend(ctx, ttl); !errors.Is(err, lock.ErrInvalidTTL) {
			t.Errorf("Extend(%v) = %v, want an error matching ErrInvalidTTL", ttl, err)
		}
	}
	if err := l.Release(ctx); err != nil {
		t.Errorf("Release after refused Extends: %v", err)
	}
}

func (s *suite) keysOpaque(t *testing.T) {
	ctx := s.ctxFor(t)
	a, b := s.client(t), s.client(t)
	base := key(t, "/")
	suffixes := []string{
		"a", "A", "a*", "a?", "[a]", "a'b", `a"b`, "a;--", "a' OR '1'='1", "a%", "a_", `a\`,
		"a b", "a\nb", "a\tb", "ключ", "鍵", "🔒", "a{b}", "$a", "a.b", "a:b",
		strings.Repeat("x", lock.MaxKeyLen-len(base)),
	}
	var held []*lock.Lock
	for _, sfx := range suffixes {
		l, err := a.TryAcquire(ctx, base+sfx)
		if err != nil {
			t.Fatalf("TryAcquire(%q): %v (every key here is distinct)", base+sfx, err)
		}
		held = append(held, l)
	}
	for _, sfx := range suffixes {
		assertHeld(t, ctx, b, base+sfx, "it was just taken")
	}
	assertFree(t, ctx, b, base+"a-", "no such key was taken")
	assertFree(t, ctx, b, base, "no such key was taken")
	for _, l := range held {
		if err := l.Release(ctx); err != nil {
			t.Errorf("Release(%q): %v", l.Key(), err)
		}
	}
	for _, sfx := range suffixes {
		assertFree(t, ctx, b, base+sfx, "it was released")
	}
}
