package drivertest

import (
	"context"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
)

// Acquisitions returns the number of acquisitions of a contention run: def,
// or the positive number in the environment variable env, for a longer run
// by hand. It fails the test if env holds anything else.
func Acquisitions(t testing.TB, env string, def int) int {
	t.Helper()
	s := os.Getenv(env)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive number", env, s)
	}
	return n
}

// Contention is a run of goroutines that take keys in turn through several
// clients, N acquisitions in all, recorded in a conformance.History. Run
// it with [Contention.Run].
type Contention struct {
	// Clients are the clients the goroutines share, goroutine g using
	// Clients[g%len(Clients)].
	Clients []*lock.Client

	// Keys are the keys, goroutine g's i-th acquisition taking
	// Keys[(g+i)%len(Keys)].
	Keys []string

	// Goroutines is the number of goroutines. Zero means 8.
	Goroutines int

	// N is the number of acquisitions in all.
	N int

	// TTL is each acquisition's. Zero means lock.DefaultTTL.
	TTL time.Duration

	// Vary, if set, holds each lock a little longer, by i%3*100µs for the
	// goroutine's i-th acquisition, so that holds do not all last as long.
	Vary bool

	// Retry, if set, counts a failed acquisition and tries it again, for a
	// run across faults. Without it, the first failed operation ends its
	// goroutine, and the run reports it in Errors.
	Retry bool

	// Done, if set, is called after each release with the number of
	// acquisitions released so far, from the goroutine that released (so
	// concurrently): the place to signal a nemesis at set points.
	Done func(done int)

	// Nemesis, if set, runs in the test's goroutine while the goroutines
	// contend, so that it may fail the test with t.Fatal: the place for
	// faults that follow Done's signals. Run waits for it, then for them.
	Nemesis func()
}

// ContentionReport is what a [Contention] run saw.
type ContentionReport struct {
	History  *conformance.History
	Took     time.Duration
	Failures int64   // failed operations, with Retry
	LastErr  error   // the last of them
	Errors   []error // the errors that ended goroutines, without Retry
}

// Run runs the contention under ctx and returns what it saw. It fails the
// test if the history shows overlapping holdings or token regressions
// (tokens are checked if fenced), or holds fewer than N acquisitions while
// no goroutine failed.
func (c Contention) Run(t testing.TB, ctx context.Context, fenced bool) ContentionReport {
	t.Helper()
	goroutines := orDefault(c.Goroutines, 8)
	opts := []lock.Option{
		lock.WithRetry(lock.ExponentialBackoff(time.Millisecond, 20*time.Millisecond)),
	}
	if c.TTL > 0 {
		opts = append(opts, lock.WithTTL(c.TTL))
	}
	var (
		h        conformance.History
		left     atomic.Int64
		done     atomic.Int64
		failures atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		lastErr  error
		errs     []error
	)
	left.Store(int64(c.N))
	start := time.Now()
	for g := range goroutines {
		wg.Go(func() {
			cl := c.Clients[g%len(c.Clients)]
			fail := func(err error) bool { // reports whether to go on
				mu.Lock()
				defer mu.Unlock()
				if !c.Retry {
					errs = append(errs, err)
					return false
				}
				failures.Add(1)
				lastErr = err
				return true
			}
			for i := 0; left.Add(-1) >= 0; i++ {
				l, err := cl.Acquire(ctx, c.Keys[(g+i)%len(c.Keys)], opts...)
				if err != nil {
					if !fail(err) || ctx.Err() != nil {
						return
					}
					left.Add(1) // try this one again
					continue
				}
				got := time.Now()
				if c.Vary {
					time.Sleep(time.Duration(i%3) * 100 * time.Microsecond)
				}
				h.Hold(l, got)
				if err := l.Release(ctx); err != nil && !fail(err) {
					return // with Retry, the lease ends it: the holding was recorded up to now
				}
				if d := done.Add(1); c.Done != nil {
					c.Done(int(d))
				}
			}
		})
	}
	if c.Nemesis != nil {
		c.Nemesis()
	}
	wg.Wait()
	rep := ContentionReport{History: &h, Took: time.Since(start), Failures: failures.Load(), LastErr: lastErr, Errors: errs}
	for _, err := range errs {
		t.Errorf("contender: %v", err)
	}
	overlaps, regressions, report := h.Violations(fenced)
	t.Logf("%d acquisitions of %d keys by %d goroutines over %d clients in %v (%.0f/s); %d failed operations (last: %v); %d overlaps, %d token regressions",
		h.Len(), len(c.Keys), goroutines, len(c.Clients), rep.Took.Round(time.Millisecond), float64(h.Len())/rep.Took.Seconds(),
		rep.Failures, rep.LastErr, overlaps, regressions)
	if overlaps != 0 || regressions != 0 {
		t.Errorf("%d overlapping holdings and %d token regressions:\n%s", overlaps, regressions, report)
	}
	if h.Len() != c.N && len(errs) == 0 {
		t.Errorf("%d holdings recorded, want %d", h.Len(), c.N)
	}
	return rep
}

// orDefault returns v, or def if v is zero.
func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
