package conformance_test

import (
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
)

// An election whose processes each keep their own store (the memory
// driver's, per process) elects a leader in every process at once: the
// election checker sees the overlapping terms.
func TestRunElection_catchesAnElectionNotShared(t *testing.T) {
	if testing.Short() {
		t.Skip("runs worker processes")
	}
	rep := conformance.RunElection(t, conformance.Processes{
		Open: func(t testing.TB) *lock.Client {
			c, err := lock.Open("memory", "procs")
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
		Workers:      3,
		Duration:     3 * time.Second,
		TTL:          300 * time.Millisecond,
		Fenced:       true,
		PauseHolders: true,
	})
	t.Log(rep)
	if len(rep.WorkerErrors) > 0 {
		t.Fatalf("workers failed: %v", rep.WorkerErrors)
	}
	// The nemesis need not have killed a leader: on a loaded machine a
	// short run deals few faults, and the processes overlap without any.
	if rep.Acquired == 0 {
		t.Fatalf("no terms: %v", rep)
	}
	if rep.Overlaps == 0 {
		t.Errorf("an election not shared between processes: %d overlapping terms, want some", rep.Overlaps)
	}
}
