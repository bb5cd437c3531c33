package drivertest

import (
	"testing"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
)

// RunElection runs an election among worker processes on the driver,
// with the safe run's settings and nemesis, in the subtest "election"
// (see conformance.RunElection). The nemesis also kills and pauses the
// leader. It requires the run safe: at most one term at a time, tokens
// increasing, no lost write, nothing left a TTL after the run. And it
// requires that leaders were killed and that the lead moved.
func (r ProcessRuns) RunElection(t *testing.T) {
	if testing.Short() {
		t.Skip("runs worker processes and a nemesis")
	}
	if r.Prefix == "" {
		r.Prefix = "distlock_procs_"
	}
	t.Run("election", func(t *testing.T) {
		name := conformance.SharedName(r.Prefix + "election_")
		connect := r.connector(r.DSN(t, name))
		p := r.Settings
		p.Open = func(t testing.TB) *lock.Client { return lock.OpenConnector(connect(t)) }
		if !conformance.InWorker() {
			p.Leftovers = r.Leftovers(t, name)
			if r.Nemesis != nil {
				r.Nemesis(t, name, &p)
			}
		}
		rep := conformance.RunElection(t, p)
		t.Log(rep)
		conformance.RequireSafe(t, rep.ProcessReport)
		if rep.Faults["kill-leader"] == 0 || rep.Leaders < 2 {
			t.Errorf("the nemesis killed %d leaders and %d workers led: want leaders killed and the lead moved", rep.Faults["kill-leader"], rep.Leaders)
		}
		if r.After != nil && !conformance.InWorker() {
			r.After(t)
		}
	})
}
