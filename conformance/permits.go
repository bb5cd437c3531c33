package conformance

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/distlock/lock"
)

// PermitViolations checks the holdings of semaphores' permits recorded in
// h, where each holding's key is a slot key (see lock.Semaphore). It
// returns the most holdings of one semaphore that overlapped at one
// instant, the number of holdings that began while n others of their
// semaphore were held, and the pairs of overlapping holdings and token
// regressions of one slot, which is a lock (see History.Violations).
func (h *History) PermitViolations(n int, fenced bool) (most, over, slotOverlaps, regressions int, report string) {
	slotOverlaps, regressions, report = h.Violations(fenced)
	h.mu.Lock()
	holds := slices.Clone(h.holds)
	h.mu.Unlock()
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
	return most, over, slotOverlaps, regressions, b.String()
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

// semaphoreOf returns the name of the semaphore whose slot key is key, or
// key itself if it is no slot key.
func semaphoreOf(key string) string {
	if i := strings.LastIndex(key, "\x1fsem\x1f"); i >= 0 {
		return key[:i]
	}
	return key
}

// acquireFor acquires key for a worker of p: the lock, or a permit of the
// semaphore named key if p.Permits.
func acquireFor(ctx context.Context, c *lock.Client, key string, p Processes) (*lock.Lock, error) {
	opts := []lock.Option{lock.WithTTL(p.TTL), lock.WithRetry(lock.ExponentialBackoff(time.Millisecond, 20*time.Millisecond))}
	if p.Permits == 0 {
		return c.Acquire(ctx, key, opts...)
	}
	s, err := c.Semaphore(key, p.Permits, opts...)
	if err != nil {
		return nil, err
	}
	return s.Acquire(ctx)
}

// registerFile names the file of key's register.
func registerFile(key string) string {
	return "register-" + strings.NewReplacer("/", "_", "\x1f", "_").Replace(key)
}
