// Package testenv tells tests where the real servers started by
// scripts/services.sh are. A test that needs a server calls one of its
// functions: without the server's variable the test is skipped with a
// message saying how to start the servers, except under CI (the CI
// variable is set), where a missing server is a failure.
package testenv

import (
	"os"
	"strings"
	"testing"

	"github.com/distlock/lock/driver"
)

const howTo = "start the test servers with `scripts/services.sh up && eval \"$(scripts/services.sh env)\"`, or run `make test`"

// Lookup returns the value of the environment variable name, skipping the
// test (or failing it under CI) if it is unset.
func Lookup(t testing.TB, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set, and CI is: the test servers must be running (%s)", name, howTo)
		}
		t.Skipf("%s is not set: %s", name, howTo)
	}
	return v
}

// RedisAddrs returns the addresses (host:port) of the independent Redis
// servers, from DISTLOCK_REDIS_ADDRS.
func RedisAddrs(t testing.TB) []string {
	t.Helper()
	return strings.Split(Lookup(t, "DISTLOCK_REDIS_ADDRS"), ",")
}

// ValkeyAddrs returns the addresses (host:port) of the independent Valkey
// servers, from DISTLOCK_VALKEY_ADDRS.
func ValkeyAddrs(t testing.TB) []string {
	t.Helper()
	return strings.Split(Lookup(t, "DISTLOCK_VALKEY_ADDRS"), ",")
}

// PostgresDSN returns the PostgreSQL test database's URL, from
// DISTLOCK_POSTGRES_DSN.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	return Lookup(t, "DISTLOCK_POSTGRES_DSN")
}

// MongoDBURI returns the URI of the MongoDB-wire test server, from
// DISTLOCK_MONGODB_URI.
func MongoDBURI(t testing.TB) string {
	t.Helper()
	return Lookup(t, "DISTLOCK_MONGODB_URI")
}

// EtcdEndpoints returns the client URLs of the three-member etcd test
// cluster, from DISTLOCK_ETCD_ENDPOINTS (comma-separated).
func EtcdEndpoints(t testing.TB) []string {
	t.Helper()
	return strings.Split(Lookup(t, "DISTLOCK_ETCD_ENDPOINTS"), ",")
}

// ZooKeeperServers returns the addresses (host:port) of the three-member
// ZooKeeper test ensemble, from DISTLOCK_ZOOKEEPER_SERVERS
// (comma-separated).
func ZooKeeperServers(t testing.TB) []string {
	t.Helper()
	return strings.Split(Lookup(t, "DISTLOCK_ZOOKEEPER_SERVERS"), ",")
}

// Connect opens a connection of d's to dsn, for tests that talk to a
// driver directly rather than through a lock.Client, and fails the test
// if it cannot. The caller closes the connection.
func Connect(t testing.TB, d driver.Driver, dsn string) driver.Conn {
	t.Helper()
	connector, err := d.OpenConnector(dsn)
	if err != nil {
		t.Fatalf("OpenConnector: %v", err)
	}
	c, err := connector.Connect(t.Context())
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	return c
}
