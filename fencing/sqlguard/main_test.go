package sqlguard_test

import (
	"testing"

	"github.com/distlock/lock/drivertest"
)

// The tests share the MariaDB and PostgreSQL servers with other packages'
// tests, but never with a package that kills or restarts them.
func TestMain(m *testing.M) {
	drivertest.Main(m, drivertest.Shared("mysql"), drivertest.Shared("postgres"))
}
