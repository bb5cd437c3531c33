package main

import (
	"strings"
	"testing"

	"github.com/distlock/lock/internal/redistest"
	"github.com/distlock/lock/internal/testenv"
)

// testServerDSN returns the DSN of driver d's test server, from the
// environment that scripts/services.sh env sets (DISTLOCK_<NAME>_DSN for
// a driver without a variable of another name), skipping the test
// without it (failing it under CI). The Redlock drivers all take the five
// Redis servers.
func testServerDSN(t *testing.T, d string) string {
	t.Helper()
	switch d {
	case "goredis", "redigo", "rueidis", "valkey":
		return redistest.DSN(testenv.RedisAddrs(t), "")
	case "postgres":
		return testenv.PostgresDSN(t)
	case "mongodb":
		return testenv.MongoDBURI(t)
	case "etcd":
		hosts := strings.Join(testenv.EtcdEndpoints(t), ",")
		return "etcd://" + strings.NewReplacer("http://", "", "https://", "").Replace(hosts)
	case "zookeeper":
		return "zk://" + strings.Join(testenv.ZooKeeperServers(t), ",")
	}
	return testenv.Lookup(t, "DISTLOCK_"+strings.ToUpper(d)+"_DSN")
}
