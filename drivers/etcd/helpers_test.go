package etcd_test

import (
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivertest"
)

// timeouts are the tests' clients': an election takes about 1-2s on the
// test cluster, whose election timeout is 1s.
var timeouts = drivertest.Timeouts{Member: 500 * time.Millisecond, Request: 3 * time.Second, TTL: 4 * time.Second}

// endpoints returns the test cluster's client URLs, skipping the test
// without them.
func endpoints(t testing.TB) []string {
	t.Helper()
	return drivertest.List(t, "DISTLOCK_ETCD_ENDPOINTS")
}

// dsn returns a DSN for the test cluster with the tests' timeouts, a
// prefix of its own, and the parameters kv (name, value, name, value...).
func dsn(t testing.TB, kv ...string) string {
	t.Helper()
	defaults := append(timeouts.Params(), "prefix", "distlock-test/"+drivertest.RandomHex(4)+"/")
	return "etcd://" + strings.Join(drivertest.Hosts(t, endpoints(t)), ",") + "?" + drivertest.Query(append(defaults, kv...)...)
}

// dsnWithPrefix returns a DSN for the test cluster with the tests'
// timeouts and the given prefix, or none if it is empty.
func dsnWithPrefix(t testing.TB, prefix string) string {
	t.Helper()
	params := timeouts.Params()
	if prefix != "" {
		params = append(params, "prefix", prefix)
	}
	return "etcd://" + strings.Join(drivertest.Hosts(t, endpoints(t)), ",") + "?" + drivertest.Query(params...)
}

// open opens a client on dsn, connected, and closed when the test ends.
func open(t testing.TB, dsn string) *lock.Client {
	t.Helper()
	return drivertest.OpenPinged(t, "etcd", dsn)
}
