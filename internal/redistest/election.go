package redistest

import (
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/driver"
)

// ElectionProcesses runs conformance.RunElection on the Redlock driver
// registered as name (d is that driver), on five nodes with fencing
// tokens: four worker processes campaign while the nemesis kills and
// pauses the leader, hangs minorities and kills minorities. It requires
// never two leaders, tokens increasing, no lost write and no key left a
// TTL after the run, and that leaders were killed and the lead moved.
func ElectionProcesses(t *testing.T, name string, d driver.Driver, run time.Duration) {
	addrs := Servers(t)
	prefix := conformance.SharedName("procs-election-") + ":"
	dsn := DSN(addrs, testQuery+"&fencing=true&key_prefix="+prefix)
	rep := conformance.RunElection(t, conformance.Processes{
		Open: func(t testing.TB) *lock.Client {
			cn, err := d.OpenConnector(dsn)
			if err != nil {
				t.Fatal(err)
			}
			return lock.OpenConnector(cn)
		},
		Duration: run, TTL: time.Second, Fenced: true,
		Faults: NewFaults(t, 5), PauseHolders: true,
		Leftovers: func(t *testing.T) int { return heldKeys(t, addrs, prefix) },
	})
	t.Log(rep)
	conformance.RequireSafe(t, rep.ProcessReport)
	if rep.Faults["kill-leader"] == 0 || rep.Leaders < 2 {
		t.Errorf("the nemesis killed %d leaders and %d workers led: want leaders killed and the lead moved", rep.Faults["kill-leader"], rep.Leaders)
	}
}
