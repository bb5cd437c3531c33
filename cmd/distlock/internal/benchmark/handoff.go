package benchmark

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/internal/latency"
)

// failurePause is how long a goroutine whose Acquire failed waits before
// it tries again, so that a backend that is down is not asked in a spin.
const failurePause = 10 * time.Millisecond

// Handoffs measures goroutines taking turns at key, each holding it for
// hold, for d. Goroutine g uses clients[g%len(clients)], so one client
// makes them share it and as many clients as goroutines give each its
// own, as separate processes would have. A goroutine that released the key
// contends again only once another has taken it, so that every acquisition
// is a handoff. Ops counts the acquisitions, Latency is the wait in
// Acquire, and Failed counts the acquisitions and releases that failed.
func Handoffs(ctx context.Context, clients []*lock.Client, key string, goroutines int, hold, d time.Duration) Figures {
	recs := recorders(goroutines, 1<<12)
	start := time.Now()
	t := newTally()
	ctx, rctx, cancel := window(ctx, d, t)
	defer cancel()
	tu := newTurns()
	defer context.AfterFunc(ctx, tu.end)()
	onGoroutines(recs, func(g int, rec *latency.Recorder) {
		defer tu.end()
		takeTurns(ctx, rctx, clients[g%len(clients)], key, hold, rec, t, tu)
	})
	return t.figures(time.Since(start), recs...)
}

// takeTurns is one goroutine of [Handoffs], until ctx ends. It releases
// under rctx.
func takeTurns(ctx, rctx context.Context, c *lock.Client, key string, hold time.Duration, rec *latency.Recorder, t *tally, tu *turns) {
	for ctx.Err() == nil {
		t0 := time.Now()
		l, err := c.Acquire(ctx, key)
		if err != nil {
			if ctx.Err() != nil {
				// Cut short by the end, the wait says why it had not
				// succeeded: the key was held, or the backend failed.
				if !errors.Is(err, lock.ErrNotAcquired) {
					t.note(err)
				}
				return
			}
			t.fail(err)
			sleep(ctx, failurePause)
			continue
		}
		rec.Add(time.Since(t0))
		t.ok()
		mine := tu.took()
		time.Sleep(hold)
		if err := l.Release(rctx); err != nil {
			t.fail(err)
		}
		tu.waitOther(mine)
	}
}

// turns counts the acquisitions of a key, so that a goroutine that
// released it can wait until another has taken it. It is safe for
// concurrent use.
type turns struct {
	mu   sync.Mutex
	cond *sync.Cond
	gen  int64 // acquisitions so far
	over bool  // the measurement ended: nobody waits any more
}

func newTurns() *turns {
	t := &turns{}
	t.cond = sync.NewCond(&t.mu)
	return t
}

// took records an acquisition and returns its number.
func (t *turns) took() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.gen++
	t.cond.Broadcast()
	return t.gen
}

// waitOther waits until an acquisition after the one numbered mine, or
// the end.
func (t *turns) waitOther(mine int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.gen == mine && !t.over {
		t.cond.Wait()
	}
}

// end ends every wait, now and later.
func (t *turns) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.over = true
	t.cond.Broadcast()
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
	case <-ctx.Done():
	}
}
