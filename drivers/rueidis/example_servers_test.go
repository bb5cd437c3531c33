//go:build servers

package rueidis_test

import (
	"strings"

	_ "github.com/distlock/lock/drivers/rueidis" // registers "rueidis"
	"github.com/distlock/lock/drivertest"
	"github.com/distlock/lock/internal/redistest"
)

// Acquire and release on five independent Valkey masters, with fencing tokens on
// (fencing=true), then acquire again: the token grows. The example runs with
// -tags servers, on the test servers of scripts/services.sh, found through
// DISTLOCK_VALKEY_ADDRS.
func Example_testServers() {
	addrs := strings.Split(drivertest.ExampleServer("DISTLOCK_VALKEY_ADDRS"), ",")
	drivertest.TokensGrow("rueidis", redistest.DSN(addrs, "fencing=true"), "rueidis-example/invoice:42")
	// Output:
	// fenced: true positive: true
	// next token greater: true
}
