package postgres_test

import (
	"testing"
	"time"

	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/drivertest"
)

// Eight worker processes take permits of one semaphore of 3 on one lease
// table, under TestProcesses's nemesis, for 6s: never more than 3
// holders, no overlap or token regression on a slot.
func TestProcesses_semaphore(t *testing.T) {
	r := processRuns()
	r.Settings.Duration = conformance.SoakDuration(6 * time.Second)
	r.RunSemaphore(t, 3, 8)
}

// BenchmarkPermit measures a permit of a semaphore of 3 beside a plain
// lock, on one lease table (see drivertest.BenchPermit).
func BenchmarkPermit(b *testing.B) {
	base := server(b)
	dsn := drivertest.WithParams(base, "pool_max_conns", "16")
	drivertest.BenchPermit(b, open(b, drivertest.WithParams(dsn, "distlock_table", freshTable(b, base))), 16)
}

// BenchmarkElectionFailover measures how long an election goes without a
// leader after its leader dies and after it resigns (see
// drivertest.BenchElectionFailover).
func BenchmarkElectionFailover(b *testing.B) {
	drivertest.BenchElectionFailover(b, "postgres", server(b), 2*time.Second)
}
