package procs

import (
	"testing"
	"time"
)

// An overlap names the holding that was still held and the one that
// began inside it; a token that does not grow names the two in order.
func TestViolations_pairs(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	holds := []Hold{
		{Key: "k", From: at(0), To: at(100), Token: 1, Fenced: true, Worker: 0},
		{Key: "k", From: at(50), To: at(60), Token: 2, Fenced: true, Worker: 1},   // inside the first
		{Key: "k", From: at(200), To: at(210), Token: 2, Fenced: true, Worker: 2}, // no overlap, token not grown
		{Key: "other", From: at(55), To: at(65), Token: 1, Fenced: true, Worker: 3},
	}
	overlaps, regressions, report, pairs := Violations(holds, true)
	if overlaps != 1 || regressions != 1 || report == "" || len(pairs) != 2 {
		t.Fatalf("%d overlaps, %d regressions, %d pairs, report %q; want 1, 1, 2", overlaps, regressions, len(pairs), report)
	}
	if p := pairs[0]; p.Kind != KindOverlap || p.First.Worker != 0 || p.Second.Worker != 1 {
		t.Errorf("first pair %+v, want workers 0 then 1 overlapping", p)
	}
	if p := pairs[1]; p.Kind != KindRegression || p.First.Worker != 1 || p.Second.Worker != 2 {
		t.Errorf("second pair %+v, want workers 1 then 2, a regression", p)
	}
	if o, r, _, p := Violations(holds, false); o != 1 || r != 0 || len(p) != 1 {
		t.Errorf("unfenced: %d overlaps, %d regressions, %d pairs; want 1, 0, 1", o, r, len(p))
	}
}
