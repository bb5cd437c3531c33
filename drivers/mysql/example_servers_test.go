//go:build servers

package mysql_test

import (
	_ "github.com/distlock/lock/drivers/mysql" // registers "mysql"
	"github.com/distlock/lock/drivertest"
)

// Acquire and release on a MariaDB database, then acquire again: the
// token grows. The example runs with -tags servers, on the test servers of
// scripts/services.sh, found through DISTLOCK_MYSQL_DSN.
func Example_testServers() {
	dsn := drivertest.ExampleServer("DISTLOCK_MYSQL_DSN")
	drivertest.TokensGrow("mysql", dsn, "mysql-example/invoice:42")
	// Output:
	// fenced: true positive: true
	// next token greater: true
}
