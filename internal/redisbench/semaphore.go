package redisbench

import (
	"testing"

	"github.com/distlock/lock/drivertest"
)

// Permit measures a permit of a semaphore of 3 beside a plain lock, on
// five nodes with fencing tokens (see drivertest.BenchPermit). Its
// parallel run has 4 goroutines: with 16, on a shared machine of 2 cores,
// nodes time out under the lock and the permit alike.
func Permit(b *testing.B, driver string) {
	drivertest.BenchPermit(b, benchClient(b, driver, 5, "fencing=true"), 4)
}
