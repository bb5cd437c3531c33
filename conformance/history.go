package conformance

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/fencing"
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
	h.mu.Lock()
	holds := slices.Clone(h.holds)
	h.mu.Unlock()
	slices.SortFunc(holds, func(a, b Hold) int {
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return a.From.Compare(b.From)
	})
	var b strings.Builder
	note := func(format string, args ...any) {
		if b.Len() < 2000 {
			fmt.Fprintf(&b, format+"\n", args...)
		}
	}
	var latest Hold // of the current key, the holding seen so far that ends last
	for i, cur := range holds {
		if i == 0 || holds[i-1].Key != cur.Key {
			latest = cur
			continue
		}
		prev := holds[i-1]
		if cur.From.Before(latest.To) {
			overlaps++
			note("key %q: a holding began %v after another and %v before that one ended",
				cur.Key, cur.From.Sub(latest.From), latest.To.Sub(cur.From))
		}
		if cur.To.After(latest.To) {
			latest = cur
		}
		if fenced && (!cur.Fenced || !prev.Fenced || cur.Token <= prev.Token) {
			regressions++
			note("key %q: token %v (fenced %v) follows token %v (fenced %v)", cur.Key, cur.Token, cur.Fenced, prev.Token, prev.Fenced)
		}
	}
	return overlaps, regressions, b.String()
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
