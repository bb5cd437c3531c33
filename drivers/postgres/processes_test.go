package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/jackc/pgx/v5"
)

// Worker processes contend on one lease table while the nemesis pauses
// holders past their TTL: no overlap, no token regression, no lost write.
func TestProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs worker processes and a nemesis")
	}
	base := server(t)
	table := conformance.SharedName("distlock_procs_")
	if !conformance.InWorker() {
		t.Cleanup(func() {
			c := admin(t, base)
			c.Exec(context.Background(), "DROP TABLE IF EXISTS "+pgx.Identifier{table}.Sanitize())
		})
	}
	dsn := withParams(base, "distlock_table", table)
	rep := conformance.RunProcesses(t, conformance.Processes{
		Open: func(t testing.TB) *lock.Client {
			c, err := lock.Open("postgres", dsn)
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
		Duration: conformance.SoakDuration(8 * time.Second), TTL: time.Second, Fenced: true, PauseHolders: true,
	})
	t.Log(rep)
	conformance.RequireSafe(t, rep)
}
