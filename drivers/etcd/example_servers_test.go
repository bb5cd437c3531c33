//go:build servers

package etcd_test

import (
	"net/url"
	"strings"

	_ "github.com/distlock/lock/drivers/etcd" // registers "etcd"
	"github.com/distlock/lock/drivertest"
)

// Acquire and release on the test cluster, then acquire again: the token,
// the key's create revision, grows. The example runs with -tags servers,
// on the cluster of scripts/services.sh, found through
// DISTLOCK_ETCD_ENDPOINTS.
func Example_testCluster() {
	var hosts []string
	for _, ep := range strings.Split(drivertest.ExampleServer("DISTLOCK_ETCD_ENDPOINTS"), ",") {
		u, _ := url.Parse(ep)
		hosts = append(hosts, u.Host)
	}
	drivertest.TokensGrow("etcd", "etcd://"+strings.Join(hosts, ",")+"?prefix=example/", "invoice:42")
	// Output:
	// fenced: true positive: true
	// next token greater: true
}
