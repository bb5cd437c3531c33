package procs

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Report is what a run saw. conformance.ProcessReport has the same
// fields, in the same order, so that one converts to the other.
type Report struct {
	Acquired, Failed      int            // acquisitions, and attempts that failed with an error
	Faults                map[string]int // the nemesis's actions, by kind
	Overlaps              int            // pairs of holdings of one key (a semaphore's slot) whose validity windows overlap
	OverPermits           int            // holdings that began while Config.Permits others of their semaphore were held
	MostHolders           int            // the most holdings of one semaphore at once, if Config.Permits
	ExpiredAtReturn       int            // locks whose validity had passed when Acquire returned them
	Regressions           int            // tokens that did not grow (fenced drivers)
	RegressionsAcrossLoss int            // tokens that did not grow across a loss of the backend's counters (see Config.Losses): not counted in Regressions
	Writes, LostWrites    int            // register writes under the lock, and those a concurrent holder overwrote
	StaleRefused          int            // writes of a token older than the register's, refused (a paused holder's)
	LeftoversCounted      bool           // Config.Leftovers was given
	LeftAtEnd             int            // locks the backend held when the workers had ended (a release that failed under a fault)
	LeftAfterTTL          int            // and a TTL and a half later: a leak, unless 0
	LongestUnavailable    time.Duration  // the longest time without any acquisition
	Report                string         // the offending holdings, if any
	WorkerErrors          []string       // workers that did not finish cleanly
	FailedErrors          []string       // the first few distinct errors of failed attempts, with their workers
	Took                  time.Duration  // the whole run
	AcquiredPerSecond     float64
}

// Broken reports whether r shows a broken promise: an overlap, a token
// regression, a lost write, a semaphore over its size, a lock returned
// expired, or a lock left a TTL and a half after the run.
func (r Report) Broken() bool {
	return r.Overlaps+r.Regressions+r.LostWrites+r.OverPermits+r.ExpiredAtReturn+r.LeftAfterTTL > 0
}

// String is the report in a paragraph.
func (r Report) String() string {
	kinds := make([]string, 0, len(r.Faults))
	for k, n := range r.Faults {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	slices.Sort(kinds)
	left := "not counted"
	if r.LeftoversCounted {
		left = fmt.Sprintf("%d at the end, %d a TTL later", r.LeftAtEnd, r.LeftAfterTTL)
	}
	permits := ""
	if r.MostHolders > 0 {
		permits = fmt.Sprintf("; permits: at most %d held at once, %d holdings over the size", r.MostHolders, r.OverPermits)
	}
	acrossLoss := ""
	if r.RegressionsAcrossLoss > 0 {
		acrossLoss = fmt.Sprintf(" (and %d across a node's loss of its counters, not promised)", r.RegressionsAcrossLoss)
	}
	return fmt.Sprintf("%d acquisitions in %v (%.0f/s), %d failed attempts; faults: %s; %d overlaps, %d token regressions%s, %d returned expired; %d register writes, %d lost, %d stale refused; longest without an acquisition %v; locks left behind: %s%s",
		r.Acquired, r.Took.Round(time.Millisecond), r.AcquiredPerSecond, r.Failed, cmp.Or(strings.Join(kinds, ", "), "none"),
		r.Overlaps, r.Regressions, acrossLoss, r.ExpiredAtReturn, r.Writes, r.LostWrites, r.StaleRefused, r.LongestUnavailable.Round(time.Millisecond), left, permits)
}
