package lock_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/memory"
)

// FuzzTryAcquire_validatesInput: any key, TTL and drift factor is taken
// or refused with a clear error matching the sentinel for what is wrong,
// never a panic; what is accepted is within the documented limits.
func FuzzTryAcquire_validatesInput(f *testing.F) {
	f.Add("k", int64(time.Second), 0.01)
	f.Add("", int64(time.Second), 0.01)
	f.Add(strings.Repeat("x", 513), int64(time.Minute), 0.0)
	f.Add("nul\x00key", int64(time.Second), 0.1)
	f.Add("bad\xffutf8", int64(time.Second), 0.1)
	f.Add("k", int64(0), 0.01)
	f.Add("k", int64(-1), 0.01)
	f.Add("k", int64(math.MaxInt64), 0.01)
	f.Add("k", int64(time.Second), math.NaN())
	f.Add("k", int64(time.Second), 0.5)
	c := lock.OpenConnector(memory.New())
	f.Cleanup(func() { c.Close() })
	f.Fuzz(func(t *testing.T, key string, ttl int64, drift float64) {
		l, err := c.TryAcquire(context.Background(), key, lock.WithTTL(time.Duration(ttl)), lock.WithDriftFactor(drift))
		validKey := key != "" && len(key) <= lock.MaxKeyLen && utf8.ValidString(key) && !strings.Contains(key, "\x00")
		validTTL := time.Duration(ttl) >= lock.MinTTL && time.Duration(ttl) <= lock.MaxTTL
		validDrift := drift >= 0 && drift < 0.5
		switch {
		case err == nil:
			if !validKey || !validTTL || !validDrift {
				t.Fatalf("TryAcquire(%q, ttl %v, drift %v) succeeded", key, time.Duration(ttl), drift)
			}
			if err := l.Release(context.Background()); err != nil {
				t.Fatal(err)
			}
		case !validKey || !validTTL || !validDrift:
			// Refused: for one of the things that are wrong (any of them,
			// when several are).
			if !(!validKey && errors.Is(err, lock.ErrInvalidKey) ||
				!validTTL && errors.Is(err, lock.ErrInvalidTTL) ||
				!validDrift && errors.Is(err, lock.ErrInvalidOption)) {
				t.Fatalf("TryAcquire(%q, ttl %v, drift %v) = %v, which names none of what is wrong", key, time.Duration(ttl), drift, err)
			}
		default:
			t.Fatalf("TryAcquire(%q, ttl %v, drift %v) = %v", key, time.Duration(ttl), drift, err)
		}
		if err != nil && len(err.Error()) > 400 { // a quoted key of 64 bytes at most, 4 characters a byte
			t.Errorf("an error of %d bytes: %.80s...", len(err.Error()), err)
		}
	})
}
