package mongodb_test

import (
	"context"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
)

// Worker processes contend on one collection while the nemesis pauses
// holders past their TTL: no overlap, no token regression, no lost write.
func TestProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs worker processes and a nemesis")
	}
	uri := server(t)
	coll := conformance.SharedName("distlock_procs_")
	if !conformance.InWorker() {
		t.Cleanup(func() { adminClient(t, uri).Database(testDB).Collection(coll).Drop(context.Background()) })
	}
	dsn := withParams(uri, "distlock_database", testDB, "distlock_collection", coll)
	rep := conformance.RunProcesses(t, conformance.Processes{
		Open: func(t testing.TB) *lock.Client {
			c, err := lock.Open("mongodb", dsn)
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
		Duration: conformance.SoakDuration(8 * time.Second), TTL: 2 * time.Second, Fenced: true, PauseHolders: true,
	})
	t.Log(rep)
	conformance.RequireSafe(t, rep)
}
