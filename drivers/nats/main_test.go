package nats_test

import (
	"testing"

	"github.com/distlock/lock/drivertest"
)

// The fault tests kill and hang nodes: no other package's tests use the
// cluster meanwhile.
func TestMain(m *testing.M) { drivertest.Main(m, drivertest.Alone("nats")) }
