package redlock

import (
	"slices"
	"sync"
	"time"
)

// workerIdle is how long an idle worker waits for a request before it
// exits.
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
// idle longest and restart its idle timer, so a burst of requests in
// flight (requests waiting out a hung node's timeout, say) would leave
// every worker it started alive for as long as requests kept coming, at
// any rate; a stack leaves those beyond the usual need idle until they
// exit.
type workers struct {
	idleFor time.Duration // workerIdle; tests shorten it
	maxIdle int

	mu     sync.Mutex
	idle   []*worker // the last became idle last
	live   int       // workers running, idle or busy
	closed bool
}

// A worker is a goroutine that runs jobs, one at a time.
type worker struct {
	jobs chan job // 1 buffered: given to the worker while it is off the stack; closed by close
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
	idle := time.NewTimer(w.idleFor)
	defer idle.Stop()
	defer w.exit()
	for {
		j.rd.async(j.i)
		if !w.park(wk) {
			return
		}
		idle.Reset(w.idleFor)
		var ok bool
		select {
		case j, ok = <-wk.jobs:
		case <-idle.C:
			if w.unpark(wk) {
				return
			}
			j, ok = <-wk.jobs // taken off the stack meanwhile: a job, or close, is on its way
		}
		if !ok {
			return // closed
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
// stack is full.
func (w *workers) park(wk *worker) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || len(w.idle) >= w.maxIdle {
		return false
	}
	w.idle = append(w.idle, wk)
	return true
}

// unpark takes wk off the idle stack, and reports whether it was there.
func (w *workers) unpark(wk *worker) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	i := slices.Index(w.idle, wk) // the idle longest are at the bottom: found early
	if i < 0 {
		return false
	}
	w.idle = slices.Delete(w.idle, i, i+1)
	return true
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
}
