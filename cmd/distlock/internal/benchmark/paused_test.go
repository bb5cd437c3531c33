package benchmark

import (
	"strings"
	"testing"
	"time"
)

// On the memory driver, the second holder gets the key about a lease after
// the first took it, the first one's lock has said it is lost by then, the
// guard refuses its stale write, and the plain value takes it.
func TestMeasurePaused_memory(t *testing.T) {
	first, second := memoryClient(t, "paused"), memoryClient(t, "paused")
	p := measurePaused(t.Context(), first, second, "paused-key", 5*time.Second)
	if p.Error != "" {
		t.Fatal(p.Error)
	}
	if p.TakenOverMs < ms(PausedTTL) || p.TakenOverMs > ms(PausedTTL)+1000 {
		t.Errorf("taken over after %.0fms; want the %v lease, and at most a second more", p.TakenOverMs, PausedTTL)
	}
	if !p.ToldLost || p.Guarded != PausedRefused || p.Unguarded != PausedOverwrote {
		t.Errorf("told lost %v, guarded %q, unguarded %q; want true, %q, %q", p.ToldLost, p.Guarded, p.Unguarded, PausedRefused, PausedOverwrote)
	}
	if p.SecondToken <= p.FirstToken {
		t.Errorf("tokens %d then %d: want them to grow", p.FirstToken, p.SecondToken)
	}
}

// A takeover that does not come within the wait is an error, not a figure.
func TestMeasurePaused_noTakeover(t *testing.T) {
	first, second := memoryClient(t, "stuck"), memoryClient(t, "stuck")
	p := measurePaused(t.Context(), first, second, "stuck-key", PausedTTL/4)
	if !strings.Contains(p.Error, "did not get the key") {
		t.Errorf("error %q; want one saying the second holder did not get the key", p.Error)
	}
}

// The table's paused-holder section has a row per driver, with what the
// guard and the plain value did, and says why a driver had no tokens.
func TestWriteTable_paused(t *testing.T) {
	r := &Report{Paused: []Paused{
		{Driver: "postgres", TakenOverMs: 1181, ToldLost: true, FirstToken: 1, SecondToken: 2, Guarded: PausedRefused, Unguarded: PausedOverwrote},
		{Driver: "goredis", TakenOverMs: 1426, ToldLost: true, Guarded: PausedNoTokens, Unguarded: PausedOverwrote},
		{Driver: "etcd", Error: "the second holder did not get the key within 11s"},
	}}
	var b strings.Builder
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"paused holder:", "refused (token 1 < 2)", "no tokens to guard with", "overwrote the newer write", "failed: the second holder", "fencing=true"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}
