package etcd_test

import (
	"context"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/etcd"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Worker processes contend on the three-member cluster while the nemesis
// hangs and kills members (one, or two) and pauses holders past their TTL:
// no overlap, no token regression, no lost write, no key left a TTL after
// the run. And the count of keys left behind sees a leaky variant's.
func TestProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs worker processes and a nemesis")
	}
	t.Run("safe", func(t *testing.T) {
		prefix := conformance.SharedName("distlock-procs/") + "/"
		full := dsn(t, "prefix", prefix)
		p := conformance.Processes{
			Open: func(t testing.TB) *lock.Client {
				c, err := lock.Open("etcd", full)
				if err != nil {
					t.Fatal(err)
				}
				return c
			},
			Duration: conformance.SoakDuration(10 * time.Second), TTL: 2 * time.Second, Fenced: true,
			Majority: true, PauseHolders: true,
		}
		if !conformance.InWorker() {
			c := theCluster(t)
			c.healthy(t, 30*time.Second)
			p.Faults = c
			p.Leftovers = keysUnder(t, prefix)
		}
		rep := conformance.RunProcesses(t, p)
		t.Log(rep)
		conformance.RequireSafe(t, rep)
		if !conformance.InWorker() {
			theCluster(t).healthy(t, 30*time.Second)
		}
	})
	t.Run("leaky", func(t *testing.T) {
		prefix := conformance.SharedName("distlock-procs-leaky/") + "/"
		full := dsn(t, "prefix", prefix)
		var count func(*testing.T) int
		if !conformance.InWorker() {
			count = keysUnder(t, prefix)
		}
		conformance.RequireLeftoversSeen(t, func(t testing.TB) driver.Connector {
			cn, err := etcd.Driver{}.OpenConnector(full)
			if err != nil {
				t.Fatal(err)
			}
			return cn
		}, count)
	})
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
