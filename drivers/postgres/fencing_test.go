package postgres_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/drivertest"
	"github.com/jackc/pgx/v5"
)

// TestFencing_10000Acquisitions makes 10,000 contended acquisitions of two
// keys from 8 goroutines over 4 clients, leaving one in a hundred to
// expire instead of releasing it, and checks with conformance.History
// that holdings never overlap and that each key's tokens strictly increase
// in the order of the holdings; then that the table's counters account for
// every grant: one per acquisition, plus at most one per attempt that the
// core gave up on after the server may have granted it (an answer that came
// too late for a 50ms lease on a loaded machine, or an error), which the core
// then released.
func TestFencing_10000Acquisitions(t *testing.T) {
	if testing.Short() {
		skipShort(t)
	}
	dsn := server(t)
	table := freshTable(t, dsn)
	full := drivertest.WithParams(dsn, "distlock_table", table)
	clients := []*lock.Client{open(t, full), open(t, full), open(t, full), open(t, full)}
	keys := []string{"fencing/a", "fencing/b"}
	const (
		total      = 10000
		goroutines = 8
		abandonTTL = 50 * time.Millisecond
	)
	ctx := drivertest.Context(t, 5*time.Minute)
	retry := lock.WithRetry(lock.ExponentialBackoff(time.Millisecond, 20*time.Millisecond))

	var (
		h    conformance.History
		next atomic.Int64
		wg   sync.WaitGroup
		errs = make(chan error, goroutines)
	)
	start := time.Now()
	for g := range goroutines {
		c := clients[g%len(clients)]
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > total {
					return
				}
				abandon := i%100 == 0
				ttl := 10 * time.Second
				if abandon {
					ttl = abandonTTL
				}
				l, err := c.Acquire(ctx, keys[i%int64(len(keys))], lock.WithTTL(ttl), retry)
				if err != nil {
					errs <- err
					return
				}
				got := time.Now()
				if abandon {
					// The holder vanishes: its holding lasts until its
					// validity runs out.
					tok, fenced := l.Token()
					h.Add(conformance.Hold{Key: l.Key(), From: got, To: l.ValidUntil(), Token: tok, Fenced: fenced})
					continue
				}
				h.Hold(l, got)
				if err := l.Release(ctx); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("contender: %v", err)
	}
	t.Logf("%d acquisitions in %v", h.Len(), time.Since(start))
	if err := h.Check(true); err != nil {
		t.Fatal(err)
	}
	if h.Len() != total {
		t.Fatalf("%d holdings recorded, want %d", h.Len(), total)
	}

	var failed uint64
	for _, c := range clients {
		failed += c.Stats().Failed
	}
	t.Logf("%d attempts failed otherwise than by finding the key held", failed)

	// The table agrees: the counters add up to the grants.
	rows, _ := admin(t, dsn).Query(context.Background(),
		"SELECT key, fence FROM "+pgx.Identifier{table}.Sanitize()+" ORDER BY key")
	fences, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct {
		Key   string
		Fence int64
	}])
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, f := range fences {
		sum += f.Fence
	}
	if len(fences) != len(keys) || sum < total || sum > total+int64(failed) {
		t.Errorf("the table's counters are %v; want %d keys whose counters add up to %d, plus at most %d failed attempts",
			fences, len(keys), total, failed)
	}
}
