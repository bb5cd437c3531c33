package etcd_test

import (
	"testing"
	"time"

	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/drivers/etcd"
	"github.com/distlock/lock/drivertest"
)

// An election among four worker processes on the three-member cluster,
// while the nemesis kills and pauses the leader and hangs and kills
// members: never two leaders, tokens increasing, no lost write.
func TestElectionProcesses(t *testing.T) {
	drivertest.ProcessRuns{
		Driver: etcd.Driver{},
		Prefix: "distlock-procs-",
		DSN:    func(t testing.TB, name string) string { return dsn(t, "prefix", name+"/") },
		Settings: conformance.Processes{
			Duration: conformance.SoakDuration(8 * time.Second), TTL: time.Second, Fenced: true,
			PauseHolders: true,
		},
		Leftovers: func(t *testing.T, name string) func(*testing.T) int { return keysUnder(t, name+"/") },
		Nemesis: func(t *testing.T, _ string, p *conformance.Processes) {
			c := theCluster(t)
			c.healthy(t, 30*time.Second)
			p.Faults = c
		},
		After: func(t *testing.T) { theCluster(t).healthy(t, 30*time.Second) },
	}.RunElection(t)
}
