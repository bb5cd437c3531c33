package lock_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/distlock/lock"
)

func TestKey_validation(t *testing.T) {
	tests := []struct {
		name  string
		key   string
		valid bool
	}{
		{"empty", "", false},
		{"one byte", "k", true},
		{"MaxKeyLen bytes", strings.Repeat("k", lock.MaxKeyLen), true},
		{"MaxKeyLen bytes of two-byte runes", strings.Repeat("é", lock.MaxKeyLen/2), true},
		{"MaxKeyLen+1 bytes", strings.Repeat("k", lock.MaxKeyLen+1), false},
		{"MaxKeyLen+1 bytes of valid UTF-8", strings.Repeat("é", lock.MaxKeyLen/2) + "k", false},
		{"invalid UTF-8", "invoice:\xff", false},
		{"truncated rune", "é"[:1], false},
		{"NUL byte", "a\x00b", false},
		{"NUL byte at the end", "ab\x00", false},
		{"spaces, slashes and unicode", "tenant/42 · invoice:7", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := &scriptedConn{}
			c := openScripted(t, sc, false)
			l, err := c.TryAcquire(context.Background(), tt.key)
			calls := sc.acquireCalls()
			if !tt.valid {
				if !errors.Is(err, lock.ErrInvalidKey) {
					t.Errorf("TryAcquire: err = %v, want ErrInvalidKey", err)
				}
				if len(calls) != 0 {
					t.Errorf("driver called %d times with an invalid key, want 0", len(calls))
				}
				return
			}
			if err != nil {
				t.Fatalf("TryAcquire: %v, want success", err)
			}
			if len(calls) != 1 || calls[0].key != tt.key {
				t.Errorf("driver got calls %+v, want one with the key unchanged", calls)
			}
			if l.Key() != tt.key {
				t.Errorf("Key() = %q, want %q", l.Key(), tt.key)
			}
		})
	}
}

func TestTTL_bounds(t *testing.T) {
	tests := []struct {
		name  string
		ttl   time.Duration
		valid bool
	}{
		{"zero", 0, false},
		{"negative", -time.Second, false},
		{"MinTTL-1", lock.MinTTL - 1, false},
		{"MinTTL", lock.MinTTL, true},
		{"MaxTTL", lock.MaxTTL, true},
		{"MaxTTL+1", lock.MaxTTL + 1, false},
		{"max duration", math.MaxInt64, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := &scriptedConn{}
			c := openScripted(t, sc, false)
			_, err := c.TryAcquire(context.Background(), "k", lock.WithTTL(tt.ttl))
			calls := sc.acquireCalls()
			if !tt.valid {
				if !errors.Is(err, lock.ErrInvalidTTL) {
					t.Errorf("TryAcquire: err = %v, want ErrInvalidTTL", err)
				}
				if len(calls) != 0 {
					t.Errorf("driver called %d times with an invalid TTL, want 0", len(calls))
				}
				return
			}
			if err != nil {
				t.Fatalf("TryAcquire: %v, want success", err)
			}
			if len(calls) != 1 || calls[0].ttl != tt.ttl {
				t.Errorf("driver got calls %+v, want one with ttl %v", calls, tt.ttl)
			}
		})
	}
}

func TestTTL_defaultIsDefaultTTL(t *testing.T) {
	sc := &scriptedConn{}
	c := openScripted(t, sc, false)
	if _, err := c.TryAcquire(context.Background(), "k"); err != nil {
		t.Fatal(err)
	}
	if calls := sc.acquireCalls(); len(calls) != 1 || calls[0].ttl != lock.DefaultTTL {
		t.Errorf("driver got %+v, want one call with ttl %v", calls, lock.DefaultTTL)
	}
}

func TestDriftFactor_bounds(t *testing.T) {
	const ttl = time.Second
	tests := []struct {
		name      string
		factor    float64
		valid     bool
		wantDrift time.Duration // ttl*factor + 2ms, for valid factors
	}{
		{"zero", 0, true, 2 * ms},
		{"negative zero", math.Copysign(0, -1), true, 2 * ms},
		{"default", lock.DefaultDriftFactor, true, 12 * ms},
		{"a quarter", 0.25, true, 252 * ms},
		{"just below a half", 0.49, true, 492 * ms},
		{"a half", 0.5, false, 0},
		{"one", 1, false, 0},
		{"negative", -0.01, false, 0},
		{"NaN", math.NaN(), false, 0},
		{"+Inf", math.Inf(1), false, 0},
		{"-Inf", math.Inf(-1), false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sc := &scriptedConn{}
				c := openScripted(t, sc, false)
				start := time.Now()
				l, err := c.TryAcquire(context.Background(), "k", lock.WithTTL(ttl), lock.WithDriftFactor(tt.factor))
				if !tt.valid {
					if !errors.Is(err, lock.ErrInvalidOption) {
						t.Errorf("TryAcquire: err = %v, want ErrInvalidOption", err)
					}
					if n := len(sc.acquireCalls()); n != 0 {
						t.Errorf("driver called %d times with an invalid drift factor, want 0", n)
					}
					return
				}
				if err != nil {
					t.Fatalf("TryAcquire: %v, want success", err)
				}
				if got, want := l.ValidUntil(), start.Add(ttl-tt.wantDrift); !got.Equal(want) {
					t.Errorf("ValidUntil = start%+v, want start%+v", got.Sub(start), want.Sub(start))
				}
			})
		})
	}
}

func TestOptions_nilOption(t *testing.T) {
	sc := &scriptedConn{}
	c := openScripted(t, sc, false)
	_, err := c.TryAcquire(context.Background(), "k", lock.WithTTL(time.Second), nil)
	if !errors.Is(err, lock.ErrInvalidOption) {
		t.Errorf("TryAcquire with a nil Option: err = %v, want ErrInvalidOption", err)
	}
	if n := len(sc.acquireCalls()); n != 0 {
		t.Errorf("driver called %d times, want 0", n)
	}
}

func TestOptions_laterOverridesEarlier(t *testing.T) {
	tests := []struct {
		name    string
		opts    []lock.Option
		wantErr error         // nil for success
		wantTTL time.Duration // for success
	}{
		{"TTL twice", []lock.Option{lock.WithTTL(time.Second), lock.WithTTL(2 * time.Second)}, nil, 2 * time.Second},
		{"invalid TTL overridden by a valid one", []lock.Option{lock.WithTTL(0), lock.WithTTL(3 * time.Second)}, nil, 3 * time.Second},
		{"valid TTL overridden by an invalid one", []lock.Option{lock.WithTTL(time.Second), lock.WithTTL(0)}, lock.ErrInvalidTTL, 0},
		{"invalid drift overridden", []lock.Option{lock.WithDriftFactor(0.7), lock.WithDriftFactor(0.1)}, nil, lock.DefaultTTL},
		{"valid drift overridden by an invalid one", []lock.Option{lock.WithDriftFactor(0.1), lock.WithDriftFactor(math.NaN())}, lock.ErrInvalidOption, 0},
		{"invalid retry overridden", []lock.Option{lock.WithRetry(lock.FixedDelay(0)), lock.WithRetry(lock.NoRetry())}, nil, lock.DefaultTTL},
		{"valid retry overridden by nil", []lock.Option{lock.WithRetry(lock.NoRetry()), lock.WithRetry(nil)}, lock.ErrInvalidOption, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := &scriptedConn{}
			c := openScripted(t, sc, false)
			_, err := c.Acquire(context.Background(), "k", tt.opts...)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("Acquire: err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Acquire: %v", err)
			}
			if calls := sc.acquireCalls(); len(calls) != 1 || calls[0].ttl != tt.wantTTL {
				t.Errorf("driver got %+v, want one call with ttl %v", calls, tt.wantTTL)
			}
		})
	}

	t.Run("drift", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := openScripted(t, &scriptedConn{}, false)
			start := time.Now()
			l, err := c.TryAcquire(context.Background(), "k", lock.WithTTL(time.Second),
				lock.WithDriftFactor(0.25), lock.WithDriftFactor(0))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := l.ValidUntil().Sub(start), time.Second-2*ms; got != want {
				t.Errorf("ValidUntil = start+%v, want start+%v (drift factor 0 wins)", got, want)
			}
		})
	})
}
