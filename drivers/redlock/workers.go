package redlock

import (
	"sync"
	"time"
)

// workerIdle is how long an idle worker waits for a request before it
// exits, at the least; it exits before twice as long.
const workerIdle = 2 * time.Second

// job is one node's part of a round.
type job struct {
	rd *round
	i  int
}

// workers runs the node requests of rounds with several nodes on
// goroutines that outlive a round, so that a round does not start (and
// allocate) a goroutine per node: a request goes to an idle worker if there
// is one, and to a new worker if not. There are never more workers than
// requests in flight at once, and idle ones exit after workerIdle or when
// the Redlock closes.
//
// At most maxIdle workers wait for requests; others exit when done. A
// round's caller goes on as soon as a quorum has answered, often before the
// workers that answered are idle again, so even one round at a time starts
// a few workers now and then: without a bound, those would add up to
// hundreds at full speed.
//
// The idle workers are a stack: a request goes to the one that became idle
// last. Had they queued on one channel, each request would go to the one
// idle longest, so a burst of requests in flight (requests waiting out a
// hung node's timeout, say) would leave every worker it started alive for
// as long as requests kept coming, at any rate; a stack leaves those
// beyond the usual need idle until they exit.
//
// An idle worker waits on its channel alone, with no timer of its own: a
// timer reset at every request, and a select over it, were a fifth of the
// rounds' own CPU (BenchmarkFanOut, see DESIGN.md). One timer, the reaper's, runs while
// any worker is idle. It ticks every idleFor, and at each tick it makes
// the workers idle since before the tick before exit: those idle for
// idleFor at least, and twice that at most. The stack keeps them in the
// order they became idle, so they are at its bottom.
type workers struct {
	idleFor time.Duration // workerIdle; tests shorten it
	maxIdle int

	mu     sync.Mutex
	idle   []*worker   // the last became idle last
	live   int         // workers running, idle or busy
	ticks  uint64      // the reaper's ticks so far
	reaper *time.Timer // ticks while any worker is idle; nil before the first is
	armed  bool        // the reaper's timer is set
	closed bool
}

// A worker is a goroutine that runs jobs, one at a time.
type worker struct {
	jobs   chan job // 1 buffered: given to the worker while it is off the stack; closed to make it exit
	parked uint64   // the reaper's ticks when it last became idle
}

// newWorkers returns workers for a Redlock of n nodes: at most 8n idle,
// enough for 8 rounds at once. (4n made 16 goroutines acquiring at full
// speed start a worker, and allocate, every few requests; 16n kept 80
// workers idle beside a client that uses 10.)
func newWorkers(n int) *workers { return &workers{idleFor: workerIdle, maxIdle: 8 * n} }

// run has j done by an idle worker or a new one.
func (w *workers) run(j job) {
	w.mu.Lock()
	if n := len(w.idle); n > 0 {
		wk := w.idle[n-1]
		w.idle[n-1] = nil
		w.idle = w.idle[:n-1]
		w.mu.Unlock()
		wk.jobs <- j
		return
	}
	w.live++
	w.mu.Unlock()
	go w.work(&worker{jobs: make(chan job, 1)}, j)
}

func (w *workers) work(wk *worker, j job) {
	defer w.exit()
	for {
		j.rd.async(j.i)
		if !w.park(wk) {
			return
		}
		var ok bool
		if j, ok = <-wk.jobs; !ok {
			return // idle too long, or closed
		}
	}
}

func (w *workers) exit() {
	w.mu.Lock()
	w.live--
	w.mu.Unlock()
}

// running returns how many workers are running.
func (w *workers) running() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.live
}

// park puts wk on the idle stack, unless the workers are closed or the
// stack is full, and sets the reaper if it is not set.
func (w *workers) park(wk *worker) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || len(w.idle) >= w.maxIdle {
		return false
	}
	wk.parked = w.ticks
	w.idle = append(w.idle, wk)
	if !w.armed {
		w.armed = true
		if w.reaper == nil {
			w.reaper = time.AfterFunc(w.idleFor, w.reap)
		} else {
			w.reaper.Reset(w.idleFor)
		}
	}
	return true
}

// reap is the reaper's tick: the workers idle since before the last tick
// exit, and the reaper is set again while others are idle.
func (w *workers) reap() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ticks++
	k := 0
	for k < len(w.idle) && w.idle[k].parked < w.ticks-1 {
		close(w.idle[k].jobs)
		w.idle[k] = nil
		k++
	}
	w.idle = append(w.idle[:0], w.idle[k:]...)
	w.armed = len(w.idle) > 0 && !w.closed
	if w.armed {
		w.reaper.Reset(w.idleFor)
	}
}

// close makes idle workers exit, and busy ones once they are done.
func (w *workers) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.closed = true
	for _, wk := range w.idle {
		close(wk.jobs)
	}
	w.idle = nil
	if w.reaper != nil {
		w.reaper.Stop()
	}
	w.armed = false
}
