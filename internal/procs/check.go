package procs

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/distlock/lock/fencing"
)

// Hold is one holding of a lock, as its holder saw it. It runs from the
// moment Acquire returned to the earlier of the moment Release was called
// and the lock's validity.
type Hold struct {
	Key      string
	From, To time.Time
	Token    fencing.Token
	Fenced   bool
	Worker   int // the worker process that held it, in a run
}

// Pair is two holdings of one key that break a promise: their windows
// overlap, or Second's token does not grow past First's.
type Pair struct {
	Kind          string // "overlap" or "regression"
	First, Second Hold
}

// Pair kinds.
const (
	KindOverlap    = "overlap"
	KindRegression = "regression"
)

// maxPairs bounds the pairs a check keeps.
const maxPairs = 100

// Check reads the records and the registers of a run of c in c.Dir into
// res: the holdings and failures, the violations of mutual exclusion and
// token order, the lost writes and the longest time without an
// acquisition.
func Check(c Config, res *Result) {
	c = c.WithDefaults()
	var holds []Hold
	writes, late := make(map[string]int), make(map[string]int)
	var starts []int64
	for i := range c.Workers {
		f, err := os.Open(recordFile(c.Dir, i))
		if err != nil {
			res.WorkerErrors = append(res.WorkerErrors, fmt.Sprintf("worker %d: no records: %v", i, err))
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var r Record
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				continue // a line cut short
			}
			if r.Err != "" {
				res.Failed++
				if len(res.FailedErrors) < 4 && !slices.ContainsFunc(res.FailedErrors, func(e string) bool { return strings.HasSuffix(e, r.Err) }) {
					res.FailedErrors = append(res.FailedErrors, fmt.Sprintf("worker %d: %s", r.Worker, r.Err))
				}
				continue
			}
			res.Acquired++
			if r.Expired {
				res.ExpiredAtReturn++
			}
			starts = append(starts, r.From)
			if r.To <= r.From {
				// The worker was paused between Acquire's return and its
				// first look at the clock, past the validity. It never
				// held the lock in a moment it could see.
				continue
			}
			holds = append(holds, Hold{Key: r.Key, From: time.Unix(0, r.From), To: time.Unix(0, r.To), Token: fencing.Token(r.Token), Fenced: r.Fenced, Worker: r.Worker})
			switch r.Write {
			case "ok":
				writes[r.Key]++
				res.Writes++
			case "late":
				writes[r.Key]++
				late[r.Key]++
				res.Writes++
			case "stale":
				res.StaleRefused++
			}
		}
		f.Close()
	}
	if c.Permits > 0 {
		res.MostHolders, res.OverPermits, res.Overlaps, res.Regressions, res.RegressionsAcrossLoss, res.Report.Report, res.Pairs = PermitViolations(holds, c.Permits, c.Fenced, c.Losses)
	} else {
		res.Overlaps, res.Regressions, res.RegressionsAcrossLoss, res.Report.Report, res.Pairs = ViolationsLosing(holds, c.Fenced, c.Losses)
	}
	for key, n := range writes {
		if lost := n - ReadRegister(c.Dir, key).Count - late[key]; lost > 0 {
			res.LostWrites += lost // more than the late writes can explain
		}
	}
	slices.Sort(starts)
	for i := 1; i < len(starts); i++ {
		res.LongestUnavailable = max(res.LongestUnavailable, time.Duration(starts[i]-starts[i-1]))
	}
	if res.Took > 0 {
		res.AcquiredPerSecond = float64(res.Acquired) / res.Took.Seconds()
	}
}

// Violations returns the number of overlapping pairs of holdings of one
// key and the number of token regressions, checking tokens only if
// fenced, with a report of them and the first pairs. It does not change
// holds.
func Violations(holds []Hold, fenced bool) (overlaps, regressions int, report string, pairs []Pair) {
	overlaps, regressions, _, report, pairs = ViolationsLosing(holds, fenced, nil)
	return overlaps, regressions, report, pairs
}

// ViolationsLosing is Violations, but a token regression across one of
// losses (see Losses) is counted in lost, and reported, rather than in
// regressions. A nil losses has none.
func ViolationsLosing(holds []Hold, fenced bool, losses *Losses) (overlaps, regressions, lost int, report string, pairs []Pair) {
	holds = slices.Clone(holds)
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
	keep := func(p Pair) {
		if len(pairs) < maxPairs {
			pairs = append(pairs, p)
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
			keep(Pair{Kind: KindOverlap, First: latest, Second: cur})
		}
		if cur.To.After(latest.To) {
			latest = cur
		}
		if fenced && (!cur.Fenced || !prev.Fenced || cur.Token <= prev.Token) {
			if losses.across(prev, cur) {
				lost++
				note("key %q: token %v (fenced %v) follows token %v (fenced %v), after a node lost its counters", cur.Key, cur.Token, cur.Fenced, prev.Token, prev.Fenced)
				continue
			}
			regressions++
			note("key %q: token %v (fenced %v) follows token %v (fenced %v)", cur.Key, cur.Token, cur.Fenced, prev.Token, prev.Fenced)
			keep(Pair{Kind: KindRegression, First: prev, Second: cur})
		}
	}
	return overlaps, regressions, lost, b.String(), pairs
}

// Losses are the moments when the backend may have lost the counters its
// fencing tokens come from: a node killed, to restart empty (Redis without
// persistence). Token order across such a loss is a promise that a driver
// may disclaim (drivers/redlock/DESIGN.md, "Restarts and persistence"), so
// the checker counts a regression across one apart. The zero value has
// none; it is safe for concurrent use.
type Losses struct {
	// Within is how long before a holding's start its token may have been
	// written: a loss that late may still have erased it. A TTL.
	Within time.Duration

	mu sync.Mutex
	at []time.Time // on CLOCK_MONOTONIC, as Hold's times
}

// Add records a loss at t (a time.Now reading of this process).
func (l *Losses) Add(t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.at = append(l.at, time.Unix(0, Mono(t)))
}

// across reports whether a loss came between prev's token and cur's
// start: after prev began (less Within, when its token may have been
// written), and before cur began. A nil l has no losses.
func (l *Losses) across(prev, cur Hold) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, at := range l.at {
		if at.After(prev.From.Add(-l.Within)) && at.Before(cur.From) {
			return true
		}
	}
	return false
}

// PermitViolations checks holdings of semaphores' permits, where each
// holding's key is a slot key (see lock.Semaphore). It returns the most
// holdings of one semaphore that overlapped at one instant, the number of
// holdings that began while n others of their semaphore were held, and
// the pairs of overlapping holdings and token regressions of one slot,
// which is a lock (see [ViolationsLosing], and for losses and lost).
func PermitViolations(holds []Hold, n int, fenced bool, losses *Losses) (most, over, slotOverlaps, regressions, lost int, report string, pairs []Pair) {
	slotOverlaps, regressions, lost, report, pairs = ViolationsLosing(holds, fenced, losses)
	var b strings.Builder
	b.WriteString(report)
	// A sweep over the holdings' ends, one semaphore at a time. Holdings
	// are half-open: one that ends at the instant another begins does
	// not overlap it.
	type edge struct {
		name string
		at   time.Time
		step int // +1 at a holding's start, -1 at its end
	}
	var edges []edge
	for _, hd := range holds {
		name := semaphoreOf(hd.Key)
		edges = append(edges, edge{name, hd.From, +1}, edge{name, hd.To, -1})
	}
	slices.SortFunc(edges, func(a, b edge) int {
		return cmp.Or(strings.Compare(a.name, b.name), a.at.Compare(b.at), cmp.Compare(a.step, b.step))
	})
	count := 0
	for i, e := range edges {
		if i > 0 && edges[i-1].name != e.name {
			count = 0
		}
		count += e.step
		most = max(most, count)
		if e.step > 0 && count > n {
			over++
			if b.Len() < 2000 {
				fmt.Fprintf(&b, "semaphore %q: %d holdings at once, over its %d permits\n", e.name, count, n)
			}
		}
	}
	return most, over, slotOverlaps, regressions, lost, b.String(), pairs
}

// semaphoreOf returns the name of the semaphore whose slot key is key, or
// key itself if it is no slot key.
func semaphoreOf(key string) string {
	if i := strings.LastIndex(key, "\x1fsem\x1f"); i >= 0 {
		return key[:i]
	}
	return key
}
