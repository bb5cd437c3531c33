package mongodb_test

import (
	"testing"

	"github.com/distlock/lock/drivertest"
)

// The fault run (processes_test.go) kills and restarts FerretDB: no other
// package's tests use it meanwhile.
func TestMain(m *testing.M) { drivertest.Main(m, drivertest.Alone("mongodb")) }
