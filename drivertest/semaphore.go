package drivertest

import (
	"context"
	"sync"
	"testing"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
)

// RunSemaphore runs the safe run of r with workers processes taking
// permits of one semaphore of permits, under the same nemesis as the
// locks' run, and requires it safe: never more than permits holders at
// once, no overlap or token regression on a slot, no lost write to a
// slot's register, nothing left a TTL after the run.
func (r ProcessRuns) RunSemaphore(t *testing.T, permits, workers int) {
	r = r.ready(t)
	p := r.settings(t, conformance.SharedName(r.Prefix+"sem_"))
	p.Permits, p.Workers, p.Keys = permits, workers, 1
	rep := conformance.RunProcesses(t, p)
	t.Log(rep)
	conformance.RequireSafe(t, rep)
	if rep.MostHolders > permits || rep.MostHolders == 0 {
		t.Errorf("at most %d permits held at once, want 1 to %d", rep.MostHolders, permits)
	}
	if r.After != nil && !conformance.InWorker() {
		r.After(t)
	}
}

// BenchPermit measures a permit of a semaphore of 3 beside a plain lock,
// both on c. "paired" alternates one uncontended TryAcquire and Release
// of each, call by call, and reports both p50s ("driver" is the permit,
// "baseline" the lock) and their ratio. "parallel" runs goroutines,
// each on a semaphore or a key of its own, in alternating 100ms windows
// (see BenchParallelPaired), and reports both rates.
func BenchPermit(b *testing.B, c *lock.Client, goroutines int) {
	ctx := context.Background()
	sems := map[string]*lock.Semaphore{}
	var mu sync.Mutex
	semaphore := func(name string) *lock.Semaphore {
		mu.Lock()
		defer mu.Unlock()
		s := sems[name]
		if s == nil {
			var err error
			if s, err = c.Semaphore(name, 3); err != nil {
				panic(err)
			}
			sems[name] = s
		}
		return s
	}
	permit := func(name string) error {
		l, err := semaphore(name).TryAcquire(ctx)
		if err != nil {
			return err
		}
		return l.Release(ctx)
	}
	plain := AcquireRelease(c)
	name, key := "bench-sem/"+RandomHex(4), "bench-lock/"+RandomHex(4)
	fail := func(err error, b *testing.B) {
		if err != nil {
			b.Fatal(err)
		}
	}
	permitOp := func(b *testing.B) { fail(permit(name), b) }
	lockOp := func(b *testing.B) { fail(plain(key), b) }
	permitOp(b)
	lockOp(b)
	b.Run("paired", func(b *testing.B) { BenchPaired(b, permitOp, lockOp) })
	b.Run("parallel", func(b *testing.B) {
		BenchParallelPaired(b, goroutines, func(k string) error { return permit("sem-" + k) }, plain)
	})
}
