package zookeeper_test

import (
	"os"
	"testing"

	"github.com/distlock/lock/drivertest"
)

// The fault tests kill and hang members: no other package's tests use the
// ensemble meanwhile. A paused holder's process (see paused_test.go) runs
// under its parent's locks, without them.
func TestMain(m *testing.M) {
	if os.Getenv(pausedHolderEnv) != "" {
		os.Exit(m.Run())
	}
	drivertest.Main(m, drivertest.Alone("zookeeper"))
}
