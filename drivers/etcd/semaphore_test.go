package etcd_test

import (
	"testing"
	"time"

	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/drivers/etcd"
	"github.com/distlock/lock/drivertest"
)

// Eight worker processes take permits of one semaphore of 3 on the
// cluster, under TestProcesses's nemesis: never more than 3 holders, no
// overlap or token regression on a slot.
func TestProcesses_semaphore(t *testing.T) {
	drivertest.ProcessRuns{
		Driver: etcd.Driver{},
		Prefix: "distlock-procs-",
		DSN:    func(t testing.TB, name string) string { return dsn(t, "prefix", name+"/") },
		Settings: conformance.Processes{
			Duration: conformance.SoakDuration(10 * time.Second), TTL: 2 * time.Second, Fenced: true,
			Majority: true, PauseHolders: true,
		},
		Leftovers: func(t *testing.T, name string) func(*testing.T) int { return keysUnder(t, name+"/") },
		Nemesis: func(t *testing.T, _ string, p *conformance.Processes) {
			c := theCluster(t)
			c.healthy(t, 30*time.Second)
			p.Faults = c
		},
		After: func(t *testing.T) { theCluster(t).healthy(t, 30*time.Second) },
	}.RunSemaphore(t, 3, 8)
}
