package etcd_test

import (
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
)

// Worker processes contend on the three-member cluster while the nemesis
// hangs and kills members (one, or two) and pauses holders past their TTL:
// no overlap, no token regression, no lost write.
func TestProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs worker processes and a nemesis")
	}
	var faults conformance.Faults
	if !conformance.InWorker() {
		c := theCluster(t)
		c.healthy(t, 30*time.Second)
		faults = c
	}
	full := dsn(t, "prefix", conformance.SharedName("distlock-procs/")+"/")
	rep := conformance.RunProcesses(t, conformance.Processes{
		Open: func(t testing.TB) *lock.Client {
			c, err := lock.Open("etcd", full)
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
		Duration: conformance.SoakDuration(10 * time.Second), TTL: 2 * time.Second, Fenced: true,
		Faults: faults, Majority: true, PauseHolders: true,
	})
	t.Log(rep)
	conformance.RequireSafe(t, rep)
	if !conformance.InWorker() {
		theCluster(t).healthy(t, 30*time.Second)
	}
}
