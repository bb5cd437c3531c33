package redisguard_test

import (
	"errors"
	"math"
	"strconv"
	"testing"

	"github.com/distlock/lock/fencing"
	"github.com/distlock/lock/fencing/redisguard"
)

// Tokens compare as numbers, exactly, across lengths and beyond 2^53,
// where Lua's doubles would call 2^53 and 2^53+1 equal.
func TestAdmit_comparesExactly(t *testing.T) {
	const p53 = 1 << 53 // 9007199254740992
	cases := []struct{ stored, token fencing.Token }{
		{1, 2}, {2, 1}, {1, 1},
		{9, 10}, {10, 9}, // lengths differ: "10" < "9" as strings
		{99, 100}, {100, 99},
		{123, 124}, {124, 123}, {1000, 999},
		{p53, p53 + 1}, {p53 + 1, p53}, {p53 + 1, p53 + 1},
		{p53 + 2, p53 + 3}, {p53 + 3, p53 + 2},
		{math.MaxInt64, math.MaxInt64 + 1},
		{math.MaxUint64 - 1, math.MaxUint64}, {math.MaxUint64, math.MaxUint64 - 1},
	}
	for _, c := range cases {
		t.Run(c.stored.String()+"_then_"+c.token.String(), func(t *testing.T) {
			f := newFixture(t)
			f.setFence(t, "r", c.stored.String())
			err := f.g.Admit(t.Context(), "r", c.token)
			want := max(c.stored, c.token)
			if c.token >= c.stored {
				if err != nil {
					t.Fatalf("Admit(%d) over %d: %v", c.token, c.stored, err)
				}
			} else {
				wantStale(t, err, "r", c.token, c.stored)
			}
			if got := f.fence(t, "r"); got != want.String() {
				t.Fatalf("fence = %q, want %q", got, want.String())
			}
		})
	}
}

func TestAdmit_firstTokenOfAResource(t *testing.T) {
	f := newFixture(t)
	if err := f.g.Admit(t.Context(), "r", 5); err != nil {
		t.Fatal(err)
	}
	if got := f.fence(t, "r"); got != "5" {
		t.Fatalf("fence = %q, want \"5\"", got)
	}
	if err := f.g.Admit(t.Context(), "other", 1); err != nil { // resources are independent
		t.Fatal(err)
	}
}

func TestAdmit_equalTokenTwice(t *testing.T) {
	f := newFixture(t)
	for i := range 3 {
		if err := f.g.Set(t.Context(), "r", 7, f.key("r", "v"), strconv.Itoa(i)); err != nil {
			t.Fatalf("Set #%d with token 7: %v", i, err)
		}
	}
	if got, _ := f.c.Get(t.Context(), f.key("r", "v")).Result(); got != "2" {
		t.Fatalf("value = %q, want the last write's \"2\"", got)
	}
}

func TestAdmit_zeroToken(t *testing.T) {
	// A nil client: the token is refused before the server is asked.
	g := redisguard.New(nil, redisguard.Config{})
	for name, call := range map[string]func() error{
		"Admit": func() error { return g.Admit(t.Context(), "r", 0) },
		"Set":   func() error { return g.Set(t.Context(), "r", 0, "k", "v") },
		"HSet":  func() error { return g.HSet(t.Context(), "r", 0, "k", "f", "v") },
	} {
		if err := call(); !errors.Is(err, fencing.ErrNoToken) {
			t.Errorf("%s with the zero token = %v, want an error matching fencing.ErrNoToken", name, err)
		}
	}
}

// A fence that no guard wrote (with a leading zero, here) is an error,
// not a stale token naming an older one.
func TestAdmit_foreignFence(t *testing.T) {
	f := newFixture(t)
	f.setFence(t, "r", "0123")
	err := f.g.Admit(t.Context(), "r", 200)
	if err == nil || errors.Is(err, fencing.ErrStale) {
		t.Fatalf("Admit over a fence of \"0123\" = %v, want an error, not ErrStale", err)
	}
}

func TestNew_defaultPrefix(t *testing.T) {
	g := redisguard.New(nil, redisguard.Config{})
	if got, want := g.FenceKey("cart/7"), "distlock:fence:{cart/7}"; got != want {
		t.Fatalf("FenceKey = %q, want %q", got, want)
	}
}

// The script is sent again after the server forgets it (SCRIPT FLUSH, or
// a restart): EVALSHA falls back to EVAL.
func TestAdmit_afterScriptFlush(t *testing.T) {
	f := newFixture(t)
	if err := f.g.Admit(t.Context(), "r", 1); err != nil {
		t.Fatal(err)
	}
	if err := f.c.ScriptFlush(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	if err := f.g.Admit(t.Context(), "r", 2); err != nil {
		t.Fatalf("Admit after SCRIPT FLUSH: %v", err)
	}
}
