package zookeeper_test

import (
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/go-zookeeper/zk"
)

// Worker processes contend on the three-member ensemble while the nemesis
// hangs and kills members (one, or two) and pauses holders past their TTL
// (and so past their session's timeout): no overlap, no token regression,
// no lost write, no lock node left a TTL after the run.
func TestProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs worker processes and a nemesis")
	}
	root := conformance.SharedName("/distlock-procs-")
	p := conformance.Processes{
		Open: func(t testing.TB) *lock.Client {
			c, err := lock.Open("zookeeper", dsnAt(t, root))
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
		Duration: conformance.SoakDuration(10 * time.Second), TTL: 2 * time.Second, Fenced: true,
		Majority: true, PauseHolders: true,
	}
	if !conformance.InWorker() {
		e := theEnsemble(t)
		e.healthy(t, 30*time.Second)
		p.Faults = e
		p.Leftovers = func(t *testing.T) int { return lockNodes(t, root) }
	}
	rep := conformance.RunProcesses(t, p)
	t.Log(rep)
	conformance.RequireSafe(t, rep)
	if !conformance.InWorker() {
		theEnsemble(t).healthy(t, 30*time.Second)
	}
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
