package drivertest_test

import (
	"testing"

	"github.com/distlock/lock/drivertest"
)

func TestMain(m *testing.M) { drivertest.Main(m) }
