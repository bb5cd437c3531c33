package conformance

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
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

// longestValue is a value of driver.MaxValueLen characters, the longest
// the core hands to a driver, with every character a value may hold.
var longestValue = strings.Repeat("0123456789-ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz", 3)[:driver.MaxValueLen]

// valuesLongest campaigns with a leader value of lock.MaxLeaderValue
// bytes, whose lock value is up to driver.MaxValueLen characters long.
// It checks that the term holds the lead against another candidate, is
// extended where the driver extends, is read back whole with its token,
// and resigns. A driver that cut or refused long values fails here.
func (s *suite) valuesLongest(t *testing.T) {
	ctx := s.ctxFor(t)
	name := key(t, "")
	e := s.election(t, s.client(t), name, lock.WithTTL(time.Minute))
	other := s.election(t, s.client(t), name)
	v := strings.Repeat("[2001:db8::1]:8080 \xff\x00 ", lock.MaxLeaderValue)[:lock.MaxLeaderValue]
	term, err := e.TryCampaign(ctx, v)
	if err != nil {
		t.Fatalf("TryCampaign with a leader value of MaxLeaderValue (%d) bytes: %v", lock.MaxLeaderValue, err)
	}
	defer term.Resign(ctx)
	if _, err := other.TryCampaign(ctx, v); !errors.Is(err, lock.ErrNotAcquired) {
		t.Errorf("TryCampaign with the same leader value while the term leads = %v, want an error matching ErrNotAcquired", err)
	}
	if s.h.Extend {
		if err := term.Lock().Extend(ctx, time.Minute); err != nil {
			t.Errorf("Extend of the term's lock: %v", err)
		}
	}
	tok, fenced := term.Token()
	// The token is written just after the grant on Redlock: allow a moment.
	var ld lock.Leader
	var ok bool
	for end := time.Now().Add(s.h.TTL / 2); ; {
		ld, ok, err = other.Leader(ctx)
		if err != nil || (ok && ld.Token == tok) || time.Now().After(end) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		// The driver cannot tell who holds a key.
	case err != nil:
		t.Errorf("Leader: %v", err)
	case !ok || ld.Value != v || ld.ID != term.Lock().ID() || ld.Token != tok || ld.Fenced != fenced:
		t.Errorf("Leader = %+v, %v; want value %q, ID %s and token %v (fenced %v)", ld, ok, v, term.Lock().ID(), tok, fenced)
	}
	if err := term.Resign(ctx); err != nil {
		t.Fatalf("Resign: %v", err)
	}
	if ld, ok, err := other.Leader(ctx); err == nil && ok {
		t.Errorf("Leader after the resignation = %+v, want nobody", ld)
	}
}

// driverLongestValue checks through the raw connection that a value of
// driver.MaxValueLen characters is stored and compared whole. A value
// that differs from the holder's in its last character only, or that
// stops one character short, must not pass for it.
func (s *suite) driverLongestValue(t *testing.T) {
	ctx := s.ctxFor(t)
	c := s.conn(t)
	k := key(t, "")
	value := longestValue
	other := value[:len(value)-1] + "x" // the last character differs
	short := value[:len(value)-1]
	if _, err := c.Acquire(ctx, k, value, s.h.TTL); err != nil {
		t.Fatalf("Acquire with a value of %d characters: %v", len(value), err)
	}
	if _, err := c.Acquire(ctx, k, other, s.h.TTL); !errors.Is(err, driver.ErrHeld) {
		t.Fatalf("Acquire of the held key by a value differing in its last character = %v, want an error matching driver.ErrHeld", err)
	}
	for _, v := range []string{other, short} {
		if err := c.Release(ctx, k, v); !errors.Is(err, driver.ErrNotHeld) {
			t.Errorf("Release by a value of %d characters that is not the holder's = %v, want an error matching driver.ErrNotHeld", len(v), err)
		}
	}
	ext, canExtend := c.(driver.Extender)
	if canExtend {
		if err := ext.Extend(ctx, k, other, s.h.TTL); !errors.Is(err, driver.ErrNotHeld) {
			t.Errorf("Extend by a value differing in its last character = %v, want an error matching driver.ErrNotHeld", err)
		}
		if err := ext.Extend(ctx, k, value, s.h.TTL); err != nil {
			t.Errorf("Extend by the holder: %v", err)
		}
	}
	insp, canInspect := c.(driver.Inspector)
	checkHolder := func(want string) {
		t.Helper()
		if !canInspect {
			return
		}
		h, held, err := insp.Inspect(ctx, k)
		if err != nil || !held || h.Value != want {
			t.Errorf("Inspect = %q (%d characters), %v, %v; want the holder's value of %d characters whole", h.Value, len(h.Value), held, err, len(want))
		}
	}
	checkHolder(value)
	holder := value
	if tr, ok := c.(driver.Transferer); ok {
		if _, err := tr.Transfer(ctx, k, value, other, s.h.TTL); err != nil {
			t.Errorf("Transfer to a value of %d characters: %v", len(other), err)
		} else {
			holder = other
			checkHolder(other)
		}
	}
	if err := c.Release(ctx, k, holder); err != nil {
		t.Errorf("Release by the holder: %v", err)
	}
	if canInspect {
		if h, held, err := insp.Inspect(ctx, k); err != nil || held {
			t.Errorf("Inspect after the release = %+v, %v, %v; want nobody", h, held, err)
		}
	}
}
