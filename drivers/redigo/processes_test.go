package redigo_test

import (
	"testing"
	"time"

	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/drivers/redigo"
	"github.com/distlock/lock/internal/redistest"
)

func TestProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs worker processes and a nemesis")
	}
	redistest.Processes(t, "redigo", redigo.Driver{}, conformance.SoakDuration(8*time.Second))
}
