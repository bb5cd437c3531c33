package drivertest

import (
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
	if testing.Short() {
		t.Skip("runs worker processes and a nemesis")
	}
	if r.Prefix == "" {
		r.Prefix = "distlock_procs_"
	}
	name := conformance.SharedName(r.Prefix + "sem_")
	connect := r.connector(r.DSN(t, name))
	p := r.Settings
	p.Permits, p.Workers, p.Keys = permits, workers, 1
	p.Open = func(t testing.TB) *lock.Client { return lock.OpenConnector(connect(t)) }
	if !conformance.InWorker() {
		p.Leftovers = r.Leftovers(t, name)
		if r.Nemesis != nil {
			r.Nemesis(t, name, &p)
		}
	}
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
