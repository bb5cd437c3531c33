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
// TTL after the run, and that leaders were killed and the lead moved. The
// same run on an unsafe variant (a backend lease a twentieth of the TTL
// the client believes) must be caught.
func ElectionProcesses(t *testing.T, name string, d driver.Driver, run time.Duration) {
	addrs := Servers(t)
	open := func(dsn string, wrap func(driver.Connector) driver.Connector) func(testing.TB) *lock.Client {
		return func(t testing.TB) *lock.Client {
			cn, err := d.OpenConnector(dsn)
			if err != nil {
				t.Fatal(err)
			}
			return lock.OpenConnector(wrap(cn))
		}
	}
	t.Run("safe", func(t *testing.T) {
		prefix := conformance.SharedName("procs-election-") + ":"
		rep := conformance.RunElection(t, conformance.Processes{
			Open:     open(DSN(addrs, testQuery+"&fencing=true&key_prefix="+prefix), func(c driver.Connector) driver.Connector { return c }),
			Duration: run, TTL: time.Second, Fenced: true,
			Faults: NewFaults(t, 5), PauseHolders: true,
			KillsLoseCounters: true, // see drivers/redlock/DESIGN.md, "Restarts and persistence"
			Leftovers:         func(t *testing.T) int { return heldKeys(t, addrs, prefix) },
		})
		t.Log(rep)
		conformance.RequireSafe(t, rep.ProcessReport)
		if rep.Faults["kill-leader"] == 0 || rep.Leaders < 2 {
			t.Errorf("the nemesis killed %d leaders and %d workers led: want leaders killed and the lead moved", rep.Faults["kill-leader"], rep.Leaders)
		}
	})
	t.Run("unsafe", func(t *testing.T) {
		prefix := conformance.SharedName("procs-election-unsafe-") + ":"
		rep := conformance.RunElection(t, conformance.Processes{
			Open:     open(DSN(addrs, testQuery+"&fencing=true&key_prefix="+prefix), func(c driver.Connector) driver.Connector { return conformance.ShortLease(c, 20) }),
			Duration: min(run, 4*time.Second), TTL: time.Second, Fenced: true,
		})
		t.Log(rep)
		conformance.RequireCaught(t, rep.ProcessReport)
	})
}
