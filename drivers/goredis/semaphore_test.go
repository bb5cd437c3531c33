package goredis_test

import (
	"testing"
	"time"

	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/drivers/goredis"
	"github.com/distlock/lock/internal/redisbench"
	"github.com/distlock/lock/internal/redistest"
)

func TestProcesses_semaphore(t *testing.T) {
	redistest.SemaphoreProcesses(t, "goredis", goredis.Driver{}, conformance.SoakDuration(6*time.Second))
}

func BenchmarkPermit(b *testing.B) { redisbench.Permit(b, "goredis") }

// BenchmarkElectionFailover measures how long an election goes without a
// leader after its leader dies and after it resigns, N=5 with fencing
// (see drivertest.BenchElectionFailover).
func BenchmarkElectionFailover(b *testing.B) { redisbench.ElectionFailover(b, "goredis") }
