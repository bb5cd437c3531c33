package postgres_test

import (
	"testing"
	"time"

	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/drivers/postgres"
	"github.com/distlock/lock/drivertest"
)

// An election among four worker processes on one lease table, while the
// nemesis kills and pauses the leader and terminates the workers'
// backends: never two leaders, tokens increasing, no lost write.
func TestElectionProcesses(t *testing.T) {
	drivertest.ProcessRuns{
		Driver:    postgres.Driver{},
		DSN:       procsDSN,
		Settings:  conformance.Processes{Duration: conformance.SoakDuration(8 * time.Second), TTL: time.Second, Fenced: true, PauseHolders: true},
		Leftovers: func(t *testing.T, table string) func(*testing.T) int { return leaseTable(t, server(t), table).live },
		Nemesis:   terminateBackends,
	}.RunElection(t)
}
