//go:build servers

package zookeeper_test

import (
	"time"

	"github.com/distlock/lock"
	_ "github.com/distlock/lock/drivers/zookeeper" // registers "zookeeper"
	"github.com/distlock/lock/drivertest"
)

// Acquire and release on the test ensemble, then acquire again: the
// token, the holder node's creation zxid, grows. A lock of a 5s TTL lives
// in a session of a 5s timeout: if this process vanished, the ensemble
// would free the key 5s later. The example runs with -tags servers, on the
// ensemble of scripts/services.sh, found through
// DISTLOCK_ZOOKEEPER_SERVERS.
func Example_testEnsemble() {
	servers := drivertest.ExampleServer("DISTLOCK_ZOOKEEPER_SERVERS")
	drivertest.TokensGrow("zookeeper", "zk://"+servers+"/distlock-example", "invoice:42", lock.WithTTL(5*time.Second))
	// Output:
	// fenced: true positive: true
	// next token greater: true
}
