//go:build servers

package redigo_test

import (
	"strings"

	_ "github.com/distlock/lock/drivers/redigo" // registers "redigo"
	"github.com/distlock/lock/drivertest"
	"github.com/distlock/lock/internal/redistest"
)

// Acquire and release on five independent masters, with fencing tokens on
// (fencing=true), then acquire again: the token grows. The example runs with
// -tags servers, on the test servers of scripts/services.sh, found through
// DISTLOCK_REDIS_ADDRS.
func Example_testServers() {
	addrs := strings.Split(drivertest.ExampleServer("DISTLOCK_REDIS_ADDRS"), ",")
	drivertest.TokensGrow("redigo", redistest.DSN(addrs, "fencing=true"), "redigo-example/invoice:42")
	// Output:
	// fenced: true positive: true
	// next token greater: true
}
