package etcd_test

import (
	"testing"
	"time"

	"github.com/distlock/lock/conformance"
)

// Eight worker processes take permits of one semaphore of 3 on the
// cluster, under TestProcesses's nemesis, for 7s: never more than 3
// holders, no overlap or token regression on a slot.
func TestProcesses_semaphore(t *testing.T) {
	r := processRuns()
	r.Settings.Duration = conformance.SoakDuration(7 * time.Second)
	r.RunSemaphore(t, 3, 8)
}
