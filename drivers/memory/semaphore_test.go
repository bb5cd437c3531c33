package memory_test

import (
	"testing"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/memory"
	"github.com/distlock/lock/drivertest"
)

// BenchmarkPermit measures a permit of a semaphore of 3 beside a plain
// lock, on one store (see drivertest.BenchPermit).
func BenchmarkPermit(b *testing.B) {
	c := lock.OpenConnector(memory.New())
	defer c.Close()
	drivertest.BenchPermit(b, c, 16)
}
