package zookeeper_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivertest"
	"github.com/go-zookeeper/zk"
)

// timeouts are the tests' clients': the test ensemble's tick is 100ms,
// and its elections fit in the request timeout.
var timeouts = drivertest.Timeouts{Member: 500 * time.Millisecond, Request: 1500 * time.Millisecond, TTL: 3 * time.Second}

// servers returns the test ensemble's members, skipping the test without
// them.
func servers(t testing.TB) []string {
	t.Helper()
	addrs := drivertest.List(t, "DISTLOCK_ZOOKEEPER_SERVERS")
	warmOnce.Do(func() { warm(t, addrs) })
	return addrs
}

var warmOnce sync.Once

// warm opens a session on the ensemble with generous timeouts, once per
// test process, before any test opens one under the tests' 1.5s request
// timeout. The members' JVMs, idle until then and sharing two cores with
// the other packages' first compilations, once took longer than that to
// grant the first sessions, and three tests failed at their first Ping.
func warm(t testing.TB, addrs []string) {
	t.Helper()
	c, err := lock.Open("zookeeper", "zk://"+strings.Join(addrs, ",")+"/distlock-test?request_timeout=30s")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Ping(ctx); err != nil {
		t.Logf("warming the ensemble up: %v", err)
	}
}

// dsn returns a DSN for the test ensemble with the tests' timeouts, a
// chroot of its own (returned too), and the parameters kv (name, value,
// name, value...).
func dsn(t testing.TB, kv ...string) (string, string) {
	t.Helper()
	root := "/distlock-test/" + drivertest.RandomHex(4)
	return dsnAt(t, root, kv...), root
}

// dsnAt is dsn with the chroot root.
func dsnAt(t testing.TB, root string, kv ...string) string {
	t.Helper()
	return "zk://" + strings.Join(servers(t), ",") + root + "?" + drivertest.Query(append(timeouts.Params(), kv...)...)
}

// open opens a client on dsn, connected, and closed when the test ends.
func open(t testing.TB, dsn string) *lock.Client {
	t.Helper()
	return drivertest.OpenPinged(t, "zookeeper", dsn)
}

// rawConn opens a plain ZooKeeper session on the test ensemble, for looking
// at nodes, closed when the test ends.
func rawConn(t testing.TB) *zk.Conn {
	t.Helper()
	zc, events, err := zk.Connect(servers(t), 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		zc.Close()
		for range events {
		}
	})
	return zc
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// nodesUnder returns every node below root, as paths relative to it.
func nodesUnder(t testing.TB, zc *zk.Conn, root string) []string {
	t.Helper()
	var out []string
	var walk func(p string)
	walk = func(p string) {
		kids, _, err := zc.Children(p)
		if err == zk.ErrNoNode {
			return
		}
		if err != nil {
			t.Fatalf("Children(%s): %v", p, err)
		}
		for _, k := range kids {
			out = append(out, strings.TrimPrefix(p+"/"+k, root+"/"))
			walk(p + "/" + k)
		}
	}
	walk(root)
	return out
}
