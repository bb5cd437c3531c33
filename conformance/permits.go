package conformance

import (
	"fmt"

	"github.com/distlock/lock/internal/procs"
)

// PermitViolations checks the holdings of semaphores' permits recorded in
// h, where each holding's key is a slot key (see lock.Semaphore). It
// returns the most holdings of one semaphore that overlapped at one
// instant, the number of holdings that began while n others of their
// semaphore were held, and the pairs of overlapping holdings and token
// regressions of one slot, which is a lock (see History.Violations).
func (h *History) PermitViolations(n int, fenced bool) (most, over, slotOverlaps, regressions int, report string) {
	most, over, slotOverlaps, regressions, _, report, _ = procs.PermitViolations(h.engineHolds(), n, fenced, nil)
	return most, over, slotOverlaps, regressions, report
}

// CheckPermits returns an error describing every instant at which more
// than n permits of one semaphore were held, every overlap of holdings of
// one slot, and every token regression of one slot (if fenced), or nil if
// there is none.
func (h *History) CheckPermits(n int, fenced bool) error {
	most, over, slotOverlaps, regressions, report := h.PermitViolations(n, fenced)
	if over == 0 && slotOverlaps == 0 && regressions == 0 {
		return nil
	}
	return fmt.Errorf("%d holdings began with %d others held (at most %d at once), %d overlapping holdings of one slot and %d token regressions in %d holdings:\n%s",
		over, n, most, slotOverlaps, regressions, h.Len(), report)
}
