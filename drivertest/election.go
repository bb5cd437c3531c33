package drivertest

import (
	"testing"

	"github.com/distlock/lock/conformance"
)

// RunElection runs an election among worker processes on the driver,
// with the safe run's settings and nemesis, in the subtest "election"
// (see conformance.RunElection). The nemesis also kills and pauses the
// leader. It requires the run safe: at most one term at a time, tokens
// increasing, no lost write, nothing left a TTL after the run. And it
// requires that leaders were killed and that the lead moved.
func (r ProcessRuns) RunElection(t *testing.T) {
	r = r.ready(t)
	t.Run("election", func(t *testing.T) {
		rep := conformance.RunElection(t, r.settings(t, conformance.SharedName(r.Prefix+"election_")))
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
