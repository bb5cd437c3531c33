package redisbench

import (
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
	"github.com/distlock/lock/internal/redistest"
)

// Permit measures a permit of a semaphore of 3 beside a plain lock, on
// five nodes with fencing tokens (see drivertest.BenchPermit). Its
// parallel run has 4 goroutines: with 16, on a shared machine of 2 cores,
// nodes time out under the lock and the permit alike.
func Permit(b *testing.B, driver string) {
	drivertest.BenchPermit(b, benchClient(b, driver, 5, "fencing=true"), 4)
}

// ElectionFailover measures an election's failovers on the driver, N=5
// with fencing, terms of 2s (see drivertest.BenchElectionFailover).
func ElectionFailover(b *testing.B, driver string) {
	addrs := redistest.Servers(b)
	drivertest.BenchElectionFailover(b, driver, redistest.DSN(addrs[:5], "fencing=true"), 2*time.Second)
}
