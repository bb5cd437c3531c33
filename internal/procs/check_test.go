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

// A token regression across a loss of the backend's counters is counted
// apart; one with no loss between its two holdings, or with a loss only
// long before the first, is a regression still. Overlaps are never
// excused.
func TestViolationsLosing(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	holds := []Hold{
		{Key: "k", From: at(1000), To: at(1100), Token: 5, Fenced: true},
		{Key: "k", From: at(2000), To: at(2100), Token: 1, Fenced: true}, // after the loss at 1500: across it
		{Key: "k", From: at(3000), To: at(3100), Token: 1, Fenced: true}, // no loss since 2000: a regression
		{Key: "k", From: at(3050), To: at(3060), Token: 9, Fenced: true}, // an overlap, loss or not
	}
	// Losses are recorded on CLOCK_MONOTONIC, as holdings' times are:
	// Add takes this process's readings, so set them directly here.
	losses := &Losses{Within: 200 * time.Millisecond, at: []time.Time{at(100), at(1500)}}
	overlaps, regressions, lost, report, pairs := ViolationsLosing(holds, true, losses)
	if overlaps != 1 || regressions != 1 || lost != 1 {
		t.Fatalf("%d overlaps, %d regressions, %d across a loss; want 1, 1, 1\n%s", overlaps, regressions, lost, report)
	}
	for _, p := range pairs {
		if p.Kind == KindRegression && p.First.From != at(2000) {
			t.Errorf("regression pair %+v, want the one from 2000 to 3000", p)
		}
	}
	// The loss at 100 is long before the first holding: it excuses nothing.
	if _, r, l, _, _ := ViolationsLosing(holds, true, &Losses{Within: 200 * time.Millisecond, at: []time.Time{at(100)}}); r != 2 || l != 0 {
		t.Errorf("with a loss long before: %d regressions, %d across a loss; want 2, 0", r, l)
	}
	// A loss just before the first holding began (within Within: its token
	// may have been written then) excuses the next.
	if _, r, l, _, _ := ViolationsLosing(holds[:2], true, &Losses{Within: 200 * time.Millisecond, at: []time.Time{at(900)}}); r != 0 || l != 1 {
		t.Errorf("with a loss 100ms before the first: %d regressions, %d across a loss; want 0, 1", r, l)
	}
	if o, r, l, _, _ := ViolationsLosing(holds, true, nil); o != 1 || r != 2 || l != 0 {
		t.Errorf("no losses: %d overlaps, %d regressions, %d across a loss; want 1, 2, 0", o, r, l)
	}
	// Add records this process's reading on the holdings' clock.
	l := &Losses{}
	before := time.Unix(0, Mono(time.Now()))
	l.Add(time.Now())
	after := time.Unix(0, Mono(time.Now()))
	if !l.across(Hold{From: before}, Hold{From: after.Add(time.Millisecond)}) {
		t.Errorf("a loss added now is not between %v and %v: %v", before, after, l.at)
	}
}
