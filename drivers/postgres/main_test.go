package postgres_test

import (
	"testing"

	"github.com/distlock/lock/drivertest"
)

// TestRestart restarts the PostgreSQL server: no other package's tests
// use it meanwhile.
func TestMain(m *testing.M) { drivertest.Main(m, drivertest.Alone("postgres")) }
