package redlock

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// A round tells a hung node from a slow one by more than one slow answer:
// past the node timeout, it gives up a node only if it is silent while
// another node answered the round, a grace before; nodes slow together,
// or a node that still answers other requests, are waited for. On fake
// nodes, in a bubble of fake time, with a fixed 100ms node timeout (its
// grace is a quarter of it, 25ms), and a TTL of a minute, so that the
// round's limit is MaxNodeTimeout.
func TestJudge_hungOrSlow(t *testing.T) {
	const timeout = 100 * time.Millisecond
	const grace = timeout / 4
	for _, c := range []struct {
		name     string
		setup    func(fs []*fakeNode)
		busy     []int // nodes that a second goroutine pings meanwhile, 10 requests at once
		ok       bool
		took     time.Duration
		contains string
	}{{
		name:  "3 of 5 hung: given up at the timeout and a grace",
		setup: func(fs []*fakeNode) { hang(fs[:3]) },
		took:  timeout + grace, contains: "given up",
	}, {
		name:  "5 of 5 slow together, 3 timeouts: waited for",
		setup: func(fs []*fakeNode) { slowDown(fs, 3*timeout) },
		ok:    true, took: 3 * timeout,
	}, {
		name: "3 of 5 slow together, 2 slow but less: waited for",
		setup: func(fs []*fakeNode) {
			slowDown(fs[:2], timeout)
			slowDown(fs[2:], 2*timeout) // within twice the first answer, and a grace
		},
		ok: true, took: 2 * timeout,
	}, {
		name: "3 of 5 slow while their sockets move: waited for",
		setup: func(fs []*fakeNode) {
			slowDown(fs[:3], 3*timeout)
		},
		busy: []int{0, 1, 2},
		ok:   true, took: 3 * timeout,
	}, {
		name:  "3 of 5 slow, 2 fast: one slow answer looks hung",
		setup: func(fs []*fakeNode) { slowDown(fs[:3], 3*timeout) },
		took:  timeout + grace, contains: "given up",
	}, {
		name:  "5 of 5 silent: nothing shows that the client reads answers, so the round waits out its limit",
		setup: func(fs []*fakeNode) { hang(fs) },
		took:  MaxNodeTimeout, contains: "deadline exceeded",
	}} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r, fs := fakes(t, 5, WithNodeTimeout(timeout))
				for range 3 { // answers to learn from, and to be silent since
					if err := r.Ping(t.Context()); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(time.Second)
				c.setup(fs)
				stop := make(chan struct{})
				var wg sync.WaitGroup
				for _, i := range c.busy {
					for k := range 10 {
						wg.Go(func() { // requests of other rounds, answered every 30ms from 300ms on
							time.Sleep(time.Duration(k) * 3 * timeout / 10)
							for {
								select {
								case <-stop:
									return
								default:
								}
								fs[i].Do(context.Background(), []any{"PING"})
								r.health[i].answered.Store(int64(time.Since(r.epoch)))
							}
						})
					}
				}
				if c.busy != nil {
					time.Sleep(3 * timeout) // the first answers of the other requests
				}
				start := time.Now()
				_, err := r.Acquire(t.Context(), "k", "v", time.Minute)
				took := time.Since(start)
				close(stop)
				if c.ok != (err == nil) {
					t.Errorf("Acquire = %v", err)
				}
				if err != nil && !strings.Contains(err.Error(), c.contains) {
					t.Errorf("Acquire = %v, want an error that says %q", err, c.contains)
				}
				if err != nil && !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("Acquire = %v, want the nodes' timeouts", err)
				}
				if took != c.took {
					t.Errorf("Acquire took %v, want %v", took, c.took)
				}
				for _, f := range fs {
					f.setHang(false)
				}
				wg.Wait()
				time.Sleep(2 * MaxNodeTimeout) // the requests out, and their undo
				r.Close()
				synctest.Wait()
			})
		})
	}
}

func hang(fs []*fakeNode) {
	for _, f := range fs {
		f.setHang(true)
	}
}

func slowDown(fs []*fakeNode, d time.Duration) {
	for _, f := range fs {
		f.setDelay(d)
	}
}

// A tick of the watchman that comes late (the client had no CPU to run
// on) judges nobody, nor does the tick after it: the answers of live
// nodes may be waiting to be read. Two ticks in a row on time do.
func TestJudge_lateTickJudgesNobody(t *testing.T) {
	var ts timers
	var w watchman
	w.tick(&ts, 100*time.Millisecond)
	defer w.stop(&ts)
	w.due = time.Now() // the timeout's tick, on time
	if w.onTime() {
		t.Fatal("the first tick on time judged: want a grace more")
	}
	w.due = time.Now()
	if !w.onTime() {
		t.Fatal("the second tick on time did not judge")
	}
	w.due = time.Now().Add(-w.grace) // late by a grace
	if w.onTime() {
		t.Fatal("a late tick judged")
	}
	w.due = time.Now()
	if w.onTime() {
		t.Fatal("the tick after a late one judged")
	}
	w.due = time.Now()
	if !w.onTime() {
		t.Fatal("two ticks on time after a late one did not judge")
	}
}
