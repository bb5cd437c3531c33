//go:build servers

package mongodb_test

import (
	_ "github.com/distlock/lock/drivers/mongodb" // registers "mongodb"
	"github.com/distlock/lock/drivertest"
)

// Acquire and release on a MongoDB server (here FerretDB), then acquire
// again: the token grows. The example runs with -tags servers, on the test
// servers of scripts/services.sh, found through DISTLOCK_MONGODB_URI.
func Example_testServers() {
	uri := drivertest.ExampleServer("DISTLOCK_MONGODB_URI")
	drivertest.TokensGrow("mongodb", uri, "mongodb-example/invoice:42")
	// Output:
	// fenced: true positive: true
	// next token greater: true
}
