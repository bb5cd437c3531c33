package goredis_test

import (
	"testing"
	"time"

	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/drivers/goredis"
	"github.com/distlock/lock/internal/redistest"
)

// An election among four worker processes on Redlock over five nodes,
// fencing on, while the nemesis kills and pauses the leader and breaks
// minorities of nodes: never two leaders, tokens increasing.
func TestElectionProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs worker processes and a nemesis")
	}
	redistest.ElectionProcesses(t, "goredis", goredis.Driver{}, conformance.SoakDuration(8*time.Second))
}
