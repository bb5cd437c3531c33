package benchmark

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/internal/latency"
)

// releaseGrace is how long past a measurement's end its releases may
// take. They run under a context of their own, so that the end of the
// measurement, or an interruption, does not leave keys held.
const releaseGrace = 2 * time.Second

// window returns the contexts of a measurement that lasts d, counted by
// t: ctx ends after d, and rctx, for its releases, 2s later, even when
// parent is cancelled; cancel ends both. A measurement in which no
// operation has succeeded by d goes on until the first one does, for at
// most max(d, 2s) more: on a loaded machine a first acquisition (a first
// connection, a first LISTEN) can take longer than a short window, and a
// window that ends before it would be reported as a failure. The rates
// are over the time the measurement took.
//
// A release's context is not cancelled when it returns, since a Redlock
// release goes on after that: its requests to the nodes that had not
// answered yet run under its context, and so does the announcement of the
// release. (Cancelled at once, they are cut short, the key stays held on
// those nodes until its TTL runs out, and waiters are not woken.)
func window(parent context.Context, d time.Duration, t *tally) (ctx, rctx context.Context, cancel func()) {
	limit := d + max(d, firstOpGrace)
	ctx, cancelCtx := context.WithTimeout(parent, limit)
	rctx, cancelR := context.WithTimeout(context.WithoutCancel(parent), limit+releaseGrace)
	go func() {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return
		}
		select {
		case <-t.firstOK:
			cancelCtx()
		case <-ctx.Done():
		}
	}()
	return ctx, rctx, func() { cancelCtx(); cancelR() }
}

// firstOpGrace is the least time a measurement with no operation done
// goes on past its duration (see window).
const firstOpGrace = 2 * time.Second

// Keys makes keys of a run's own: a random prefix, so that runs do not
// collide, and a counter, so that a key that may still be held (after a
// failed operation) is never used again. It is safe for concurrent use.
type Keys struct {
	prefix string
	n      atomic.Int64
}

// NewKeys returns Keys with a fresh random prefix.
func NewKeys() *Keys {
	var r [6]byte
	rand.Read(r[:])
	return &Keys{prefix: "distlock-bench/" + hex.EncodeToString(r[:]) + "/"}
}

// Prefix returns the prefix of every key k makes.
func (k *Keys) Prefix() string { return k.prefix }

// Next returns a key never returned before, named after what it is for.
func (k *Keys) Next(name string) string {
	return fmt.Sprintf("%s%s/%d", k.prefix, name, k.n.Add(1))
}

// tally counts a measurement's operations. It is safe for concurrent use.
// Make it with newTally.
type tally struct {
	ops, failed atomic.Int64
	mu          sync.Mutex
	lastErr     error
	firstOnce   sync.Once
	firstOK     chan struct{} // closed at the first operation done
}

func newTally() *tally { return &tally{firstOK: make(chan struct{})} }

func (t *tally) ok() {
	t.ops.Add(1)
	t.firstOnce.Do(func() { close(t.firstOK) })
}

func (t *tally) fail(err error) {
	t.failed.Add(1)
	t.note(err)
}

// note records err as the last error, without counting a failure.
func (t *tally) note(err error) {
	t.mu.Lock()
	t.lastErr = err
	t.mu.Unlock()
}

// figures returns the measurement's figures, over elapsed, with the
// latencies of rs.
func (t *tally) figures(elapsed time.Duration, rs ...*latency.Recorder) Figures {
	f := Figures{Ops: t.ops.Load(), Failed: t.failed.Load(), Seconds: elapsed.Seconds(), Latency: Distribute(rs...)}
	if elapsed > 0 {
		f.PerSecond = float64(f.Ops) / elapsed.Seconds()
	}
	t.mu.Lock()
	if t.lastErr != nil {
		f.LastError = t.lastErr.Error()
	}
	t.mu.Unlock()
	if f.Ops == 0 && f.LastError != "" {
		f.Error = "no operation succeeded: " + f.LastError
	}
	return f
}

// Cycle measures TryAcquire and Release, one after another, on n
// goroutines sharing c, each on a key of its own, for d. An operation that
// fails is counted in Failed and its goroutine goes on with a new key,
// since the old one may stay held by a request the backend carried out
// after the client gave up on it. Operations cut short by the end of d
// are not counted.
func Cycle(ctx context.Context, c *lock.Client, keys *Keys, name string, n int, d time.Duration) Figures {
	recs := recorders(n, 1<<14)
	start := time.Now()
	t := newTally()
	ctx, rctx, cancel := window(ctx, d, t)
	defer cancel()
	onGoroutines(recs, func(_ int, rec *latency.Recorder) {
		key := keys.Next(name)
		for ctx.Err() == nil {
			t0 := time.Now()
			err := acquireRelease(ctx, rctx, c, key)
			switch {
			case err == nil:
				rec.Add(time.Since(t0))
				t.ok()
			case ctx.Err() != nil:
				return
			default:
				t.fail(err)
				key = keys.Next(name)
			}
		}
	})
	return t.figures(time.Since(start), recs...)
}

// recorders returns n Recorders with room for capacity samples each.
func recorders(n, capacity int) []*latency.Recorder {
	recs := make([]*latency.Recorder, n)
	for g := range recs {
		recs[g] = latency.New(capacity)
	}
	return recs
}

// onGoroutines runs f on a goroutine per Recorder of recs, all at once,
// each with its number and its Recorder, and waits until they return.
func onGoroutines(recs []*latency.Recorder, f func(g int, rec *latency.Recorder)) {
	var wg sync.WaitGroup
	for g, rec := range recs {
		wg.Go(func() { f(g, rec) })
	}
	wg.Wait()
}

// acquireRelease takes key under ctx and releases it under rctx.
func acquireRelease(ctx, rctx context.Context, c *lock.Client, key string) error {
	l, err := c.TryAcquire(ctx, key)
	if err != nil {
		return err
	}
	return l.Release(rctx)
}
