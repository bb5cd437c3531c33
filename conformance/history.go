package conformance

import (
	"fmt"
	"sync"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/fencing"
	"github.com/distlock/lock/internal/procs"
)

// Hold is one holding of a lock, as seen by its holder on this process's
// monotonic clock. It runs from the moment Acquire returned to the earlier
// of the moment Release was called and the lock's validity.
type Hold struct {
	Key      string
	From, To time.Time
	Token    fencing.Token
	Fenced   bool
}

// History collects holdings from any number of goroutines and checks them
// for the two properties a single process can see. One is mutual
// exclusion, where no two holdings of one key overlap. The other is
// fencing, where tokens of one key strictly increase in the order the
// holdings began. The zero History is ready to use. It is safe for
// concurrent use.
type History struct {
	mu    sync.Mutex
	holds []Hold
}

// Add records a holding.
func (h *History) Add(hold Hold) {
	h.mu.Lock()
	h.holds = append(h.holds, hold)
	h.mu.Unlock()
}

// Hold records the holding of l that ends now, as its holder is about to
// release it. The holding runs from acquired (when Acquire returned) to
// the earlier of now and l's validity. Call Hold before Release, which
// moves the validity.
func (h *History) Hold(l *lock.Lock, acquired time.Time) {
	end := time.Now()
	if vu := l.ValidUntil(); vu.Before(end) {
		end = vu
	}
	tok, fenced := l.Token()
	h.Add(Hold{Key: l.Key(), From: acquired, To: end, Token: tok, Fenced: fenced})
}

// Len returns the number of holdings recorded.
func (h *History) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.holds)
}

// Violations returns the number of overlapping pairs of holdings of one key
// and the number of token regressions, checking tokens only if fenced.
func (h *History) Violations(fenced bool) (overlaps, regressions int, report string) {
	overlaps, regressions, report, _ = procs.Violations(h.engineHolds(), fenced)
	return overlaps, regressions, report
}

// engineHolds returns the holdings recorded, as the engine's checker
// takes them.
func (h *History) engineHolds() []procs.Hold {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]procs.Hold, len(h.holds))
	for i, hd := range h.holds {
		out[i] = procs.Hold{Key: hd.Key, From: hd.From, To: hd.To, Token: hd.Token, Fenced: hd.Fenced}
	}
	return out
}

// Check returns an error describing every overlap and token regression,
// or nil if there is none.
func (h *History) Check(fenced bool) error {
	overlaps, regressions, report := h.Violations(fenced)
	if overlaps == 0 && regressions == 0 {
		return nil
	}
	return fmt.Errorf("%d overlapping holdings and %d token regressions in %d holdings:\n%s",
		overlaps, regressions, h.Len(), report)
}
