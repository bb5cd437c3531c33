package zookeeper_test

import (
	"testing"

	"github.com/distlock/lock/internal/testenv"
)

// The fault tests kill and hang members: no other package's tests use the
// ensemble meanwhile.
func TestMain(m *testing.M) { testenv.Main(m, testenv.ZooKeeper) }
