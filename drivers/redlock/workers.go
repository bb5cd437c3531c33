package redlock

import (
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
type workers struct {
	jobs chan job      // unbuffered: a send succeeds only if a worker is idle
	quit chan struct{} // closed by close
	once sync.Once
}

func newWorkers() *workers {
	return &workers{jobs: make(chan job), quit: make(chan struct{})}
}

// run has j done by an idle worker or a new one.
func (w *workers) run(j job) {
	select {
	case w.jobs <- j:
	default:
		go w.work(j)
	}
}

func (w *workers) work(j job) {
	j.rd.async(j.i)
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		select {
		case j = <-w.jobs:
			j.rd.async(j.i)
			idle.Reset(workerIdle)
		case <-idle.C:
			return
		case <-w.quit:
			return
		}
	}
}

// close makes idle workers exit, and busy ones once they are done.
func (w *workers) close() { w.once.Do(func() { close(w.quit) }) }
