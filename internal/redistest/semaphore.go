package redistest

import (
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/driver"
)

// SemaphoreProcesses runs eight worker processes taking permits of one
// semaphore of 3 through the driver registered as name (d is that
// driver), on five nodes with fencing tokens, under Processes's nemesis.
// It requires never more than 3 holders, and no overlap or token
// regression on a slot.
func SemaphoreProcesses(t *testing.T, name string, d driver.Driver, run time.Duration) {
	if testing.Short() {
		t.Skip("runs worker processes and a nemesis")
	}
	addrs := Servers(t)
	prefix := conformance.SharedName("procs-sem-") + ":"
	dsn := DSN(addrs, testQuery+"&fencing=true&key_prefix="+prefix)
	rep := conformance.RunProcesses(t, conformance.Processes{
		Open: func(t testing.TB) *lock.Client {
			cn, err := d.OpenConnector(dsn)
			if err != nil {
				t.Fatal(err)
			}
			return lock.OpenConnector(cn)
		},
		Workers: 8, Keys: 1, Permits: 3,
		Duration: run, TTL: time.Second, Fenced: true,
		Faults: NewFaults(t, 5), Majority: true, PauseHolders: true,
		KillsLoseCounters: true, // see drivers/redlock/DESIGN.md, "Restarts and persistence"
		Leftovers:         func(t *testing.T) int { return heldKeys(t, addrs, prefix) },
	})
	t.Log(rep)
	conformance.RequireSafe(t, rep)
	if rep.MostHolders > 3 || rep.MostHolders == 0 {
		t.Errorf("at most %d permits held at once, want 1 to 3", rep.MostHolders)
	}
}
