package conformance_test

import (
	"testing"
	"time"

	"github.com/distlock/lock/conformance"
)

// TestCheckPermits_catchesTooManyHolders feeds the permits checker made-up
// holdings of a semaphore of 3, with and without a fourth holder at once.
func TestCheckPermits_catchesTooManyHolders(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	slot := func(i int) string { return "s\x1fsem\x1f" + string(rune('0'+i)) }
	three := []conformance.Hold{
		{Key: slot(0), From: at(0), To: at(10), Token: 1, Fenced: true},
		{Key: slot(1), From: at(1), To: at(10), Token: 1, Fenced: true},
		{Key: slot(2), From: at(2), To: at(10), Token: 1, Fenced: true},
		{Key: slot(0), From: at(10), To: at(20), Token: 2, Fenced: true}, // begins as the first ends
	}
	for _, tc := range []struct {
		name     string
		extra    []conformance.Hold
		wantOver int
		wantMost int
	}{
		{"three", nil, 0, 3},
		{"fourOnAFourthSlot", []conformance.Hold{{Key: slot(3), From: at(5), To: at(6), Token: 1, Fenced: true}}, 1, 4},
		{"otherSemaphore", []conformance.Hold{{Key: "t\x1fsem\x1f0", From: at(5), To: at(6), Token: 1, Fenced: true}}, 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h conformance.History
			for _, hd := range append(three, tc.extra...) {
				h.Add(hd)
			}
			most, over, slotOverlaps, regressions, _ := h.PermitViolations(3, true)
			if most != tc.wantMost || over != tc.wantOver || slotOverlaps != 0 || regressions != 0 {
				t.Errorf("PermitViolations = most %d, over %d, slot overlaps %d, regressions %d; want most %d, over %d, 0, 0",
					most, over, slotOverlaps, regressions, tc.wantMost, tc.wantOver)
			}
			if err := h.CheckPermits(3, true); (err != nil) != (tc.wantOver > 0) {
				t.Errorf("CheckPermits = %v, want an error: %v", err, tc.wantOver > 0)
			}
		})
	}
}

// TestCheckPermits_slotIsALock checks that two holdings of one slot at
// once, and a slot's token that does not grow, are caught.
func TestCheckPermits_slotIsALock(t *testing.T) {
	t0 := time.Now()
	var h conformance.History
	h.Add(conformance.Hold{Key: "s\x1fsem\x1f0", From: t0, To: t0.Add(10 * time.Millisecond), Token: 5, Fenced: true})
	h.Add(conformance.Hold{Key: "s\x1fsem\x1f0", From: t0.Add(5 * time.Millisecond), To: t0.Add(20 * time.Millisecond), Token: 4, Fenced: true})
	_, over, slotOverlaps, regressions, _ := h.PermitViolations(3, true)
	if over != 0 || slotOverlaps != 1 || regressions != 1 {
		t.Errorf("over %d, slot overlaps %d, regressions %d; want 0, 1, 1", over, slotOverlaps, regressions)
	}
}
