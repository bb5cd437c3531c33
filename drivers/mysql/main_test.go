package mysql_test

import (
	"testing"

	"github.com/distlock/lock/drivertest"
)

// The fault tests hang, kill and restart the MariaDB server: no other
// package's tests use it meanwhile.
func TestMain(m *testing.M) { drivertest.Main(m, drivertest.Alone("mysql")) }
