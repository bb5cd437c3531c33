package conformance_test

import (
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	_ "github.com/distlock/lock/drivers/memory"
)

// A lock that every process keeps to itself (the memory driver, whose
// store is per process) is no lock between processes: the checker sees
// the overlaps and the lost register writes.
func TestRunProcesses_catchesALockNotShared(t *testing.T) {
	if testing.Short() {
		t.Skip("runs worker processes")
	}
	rep := conformance.RunProcesses(t, conformance.Processes{
		Open: func(t testing.TB) *lock.Client {
			c, err := lock.Open("memory", "procs")
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
		Workers:  3,
		Keys:     1,
		Duration: 2 * time.Second,
		TTL:      time.Second,
		Fenced:   true,
	})
	t.Log(rep)
	if len(rep.WorkerErrors) > 0 {
		t.Fatalf("workers failed: %v", rep.WorkerErrors)
	}
	if rep.Acquired == 0 {
		t.Fatal("no acquisitions recorded")
	}
	if rep.Overlaps == 0 || rep.LostWrites == 0 {
		t.Errorf("a lock not shared between processes: %d overlaps and %d lost writes, want both above 0", rep.Overlaps, rep.LostWrites)
	}
}
