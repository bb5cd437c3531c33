package zookeeper_test

import (
	"testing"
	"time"

	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/drivers/zookeeper"
	"github.com/distlock/lock/drivertest"
	"github.com/go-zookeeper/zk"
)

// Worker processes contend on the three-member ensemble while the nemesis
// hangs and kills members (one, or two) and pauses holders past their TTL
// (and so past their session's timeout): no overlap, no token regression,
// no lost write, no lock node left a TTL after the run.
func TestProcesses(t *testing.T) {
	drivertest.ProcessRuns{
		Driver: zookeeper.Driver{},
		Prefix: "/distlock-procs-",
		DSN:    func(t testing.TB, root string) string { return dsnAt(t, root) },
		Settings: conformance.Processes{
			Duration: conformance.SoakDuration(10 * time.Second), TTL: 2 * time.Second, Fenced: true,
			Majority: true, PauseHolders: true,
		},
		Leftovers: func(t *testing.T, root string) func(*testing.T) int {
			return func(t *testing.T) int { return lockNodes(t, root) }
		},
		Nemesis: func(t *testing.T, _ string, p *conformance.Processes) {
			e := theEnsemble(t)
			e.healthy(t, 30*time.Second)
			p.Faults = e
		},
		After:      func(t *testing.T) { theEnsemble(t).healthy(t, 30*time.Second) },
		NoLeakyRun: "not yet tried on ZooKeeper, whose lock nodes end with their sessions",
	}.Run(t)
}

// lockNodes counts the ephemeral nodes under root: the lock nodes of
// holders and waiters, which live as long as their sessions. Key nodes,
// which the ensemble removes once empty, do not count.
func lockNodes(t *testing.T, root string) int {
	zc := rawConn(t)
	n := 0
	for _, rel := range nodesUnder(t, zc, root) {
		_, st, err := zc.Get(root + "/" + rel)
		if err == zk.ErrNoNode {
			continue
		}
		if err != nil {
			t.Errorf("counting leftovers: %v", err)
			return n
		}
		if st.EphemeralOwner != 0 {
			n++
		}
	}
	return n
}
