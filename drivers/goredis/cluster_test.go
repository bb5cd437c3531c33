package goredis_test

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/goredis"
	"github.com/distlock/lock/drivers/redlock"
	"github.com/distlock/lock/internal/redistest"
)

// Redis Clusters of the test's own, each one Redlock node through a
// cluster client given to New: conformance, and the keys of one lock in
// one slot. What a failover does is in cluster_failover_test.go.

// clusterNodeTimeout is the per-node timeout of the tests' clients, as
// redistest's conformance runs use on the shared servers.
const clusterNodeTimeout = 250 * time.Millisecond

// clusterTTL is the conformance suite's short TTL. The suite's cases wait
// for it, two at a time: with 1s, the two runs took 30s. The fenced run on
// three clusters takes 1s: a fenced acquisition is two rounds, and in make
// test one ate a 500ms lease before its first extension.
const clusterTTL = 500 * time.Millisecond

// TestConformance_cluster runs the conformance suite with one cluster of
// three masters as the node of N=1, and with three such clusters as the
// nodes of N=3, with fencing tokens, whose scripts touch a lock and its
// counter in one call. Drop is left out: it refuses a cluster client. So
// are the fault cases, which kill whole nodes: TestCluster_failover breaks
// clusters.
func TestConformance_cluster(t *testing.T) {
	three := redistest.ClusterSpec{Masters: 3}
	clusters := redistest.StartClusters(t, three, three, three)
	t.Run("N=1", func(t *testing.T) {
		conformance.Run(t, clusterHarness(clusters[:1], false))
	})
	t.Run("N=3/fencing", func(t *testing.T) {
		h := clusterHarness(clusters, true)
		h.TTL = 2 * clusterTTL
		conformance.Run(t, h)
	})
	t.Run("Keys_braces", func(t *testing.T) { keysWithBraces(t, clusters[:1]) })
}

// clusterHarness is the conformance harness of a Redlock whose nodes are
// clusters, with fencing tokens if fencing.
func clusterHarness(clusters []*redistest.Cluster, fencing bool) conformance.Harness {
	return conformance.Harness{
		NewClient: func(t *testing.T) *lock.Client {
			c := lock.OpenConnector(clusterConnector(t, clusters, fencing, redis.ClusterOptions{}))
			warmed(t, c.Ping)
			return c
		},
		NewConn: func(t *testing.T) driver.Conn {
			c, err := clusterConnector(t, clusters, fencing, redis.ClusterOptions{}).Connect(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			warmed(t, c.(driver.Pinger).Ping)
			return c
		},
		Fencing: fencing,
		Extend:  true,
		Wakeups: true,
		TTL:     clusterTTL,
		Misconfigured: func(t *testing.T) *lock.Client {
			// A user the nodes do not know: WRONGPASS on every node.
			o := redis.ClusterOptions{Username: "nobody", Password: "not-the-password-4711"}
			return lock.OpenConnector(clusterConnector(t, clusters, fencing, o))
		},
		NewDialerClient: func(t *testing.T, dial driver.DialFunc) *lock.Client {
			o := redis.ClusterOptions{Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
				return dial(ctx, network, addr)
			}}
			return lock.OpenConnector(clusterConnector(t, clusters, fencing, o))
		},
	}
}

// clusterConnector returns New's connector over a cluster client per
// cluster, with o's options, closed when the test ends.
func clusterConnector(t *testing.T, clusters []*redistest.Cluster, fencing bool, o redis.ClusterOptions) driver.Connector {
	t.Helper()
	clients := make([]redis.UniversalClient, len(clusters))
	for i, c := range clusters {
		o := o
		o.Addrs = c.Addrs()
		o.ContextTimeoutEnabled = true
		cc := redis.NewClusterClient(&o)
		t.Cleanup(func() { cc.Close() })
		clients[i] = cc
	}
	cn, err := goredis.New(clients, redlock.WithNodeTimeout(clusterNodeTimeout), redlock.WithFencing(fencing))
	if err != nil {
		t.Fatal(err)
	}
	return cn
}

// clusterClient is a lock client over clusterConnector, once it has
// connected (see warmed).
func clusterClient(t *testing.T, clusters []*redistest.Cluster, fencing bool) *lock.Client {
	t.Helper()
	c := lock.OpenConnector(clusterConnector(t, clusters, fencing, redis.ClusterOptions{}))
	c.SetLogger(slog.New(slog.NewTextHandler(t.Output(), nil)))
	t.Cleanup(func() { c.Close() })
	warmed(t, c.Ping)
	return c
}

// warmed returns once ping succeeds. A cluster client's first request also
// loads the slots and the commands' key positions, which the race detector
// and a busy machine make slower than the node timeout: in make test, the
// first Acquire of Driver_ownership and Driver_noRevival on a new
// connection failed at the 250ms node timeout.
func warmed(t *testing.T, ping func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		err := ping(ctx)
		if err == nil {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("Ping of a new client: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// keysWithBraces takes, inspects and releases keys with braces where
// Redis Cluster looks for a hash tag, with fencing tokens. The scripts of
// a fenced acquisition and of Inspect touch the lock and its counter: a
// cluster refuses them (CROSSSLOT) unless both are in one slot, which a
// key that starts with '}' once broke.
func keysWithBraces(t *testing.T, clusters []*redistest.Cluster) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	c := clusterClient(t, clusters, true)
	for _, key := range []string{"}", "}a", "}a{b}", "}}", "{}", "{}a", "a}", "{a}", "a{b}", "{"} {
		l, err := c.TryAcquire(ctx, key)
		if err != nil {
			t.Errorf("TryAcquire(%q): %v", key, err)
			continue
		}
		tok, ok := l.Token()
		if !ok || tok == 0 {
			t.Errorf("TryAcquire(%q): token %v, %v", key, tok, ok)
		}
		if h, held, err := c.Inspect(ctx, key); err != nil || !held || h.ID != l.ID() || h.Token != tok {
			t.Errorf("Inspect(%q): %+v, %v, %v; want it held by %s with token %v", key, h, held, err, l.ID(), tok)
		}
		if err := l.Release(ctx); err != nil {
			t.Errorf("Release(%q): %v", key, err)
		}
	}
}
