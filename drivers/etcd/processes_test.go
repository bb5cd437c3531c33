package etcd_test

import (
	"context"
	"testing"
	"time"

	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/drivers/etcd"
	"github.com/distlock/lock/drivertest"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Worker processes contend on the three-member cluster while the nemesis
// hangs and kills members (one, or two) and pauses holders past their TTL:
// no overlap, no token regression, no lost write, no key left a TTL after
// the run. And the count of keys left behind sees a leaky variant's.
func TestProcesses(t *testing.T) { processRuns().Run(t) }

// processRuns is the fault run of the lock and of the semaphore
// (TestProcesses_semaphore).
func processRuns() drivertest.ProcessRuns {
	return drivertest.ProcessRuns{
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
	}
}

// keysUnder returns a count of the keys under prefix, on a client closed
// when the test ends. Every key there is a lock: tokens are revisions.
func keysUnder(t *testing.T, prefix string) func(*testing.T) int {
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints(t), Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return func(t *testing.T) int {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			t.Errorf("counting leftovers: %v", err)
			return 0
		}
		return int(resp.Count)
	}
}
