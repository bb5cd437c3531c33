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
	redistest.SemaphoreProcesses(t, "goredis", goredis.Driver{}, conformance.SoakDuration(8*time.Second))
}

func BenchmarkPermit(b *testing.B) { redisbench.Permit(b, "goredis") }
