//go:build servers

package postgres_test

import (
	_ "github.com/distlock/lock/drivers/postgres" // registers "postgres"
	"github.com/distlock/lock/drivertest"
)

// Acquire and release on a PostgreSQL database, then acquire again: the
// token grows. The example runs with -tags servers, on the test servers of
// scripts/services.sh, found through DISTLOCK_POSTGRES_DSN.
func Example_testServers() {
	dsn := drivertest.ExampleServer("DISTLOCK_POSTGRES_DSN")
	drivertest.TokensGrow("postgres", dsn, "postgres-example/invoice:42")
	// Output:
	// fenced: true positive: true
	// next token greater: true
}
