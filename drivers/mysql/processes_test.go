package mysql_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/distlock/lock/conformance"
	mysqldriver "github.com/distlock/lock/drivers/mysql"
	"github.com/distlock/lock/drivertest"
)

// Worker processes contend on one lease table while the nemesis pauses
// holders past their TTL, hangs the server (SIGSTOP), kills it (SIGKILL)
// and starts it again, and kills the workers' connections (KILL
// CONNECTION): no overlap, no token regression, no lost write, no lease
// left a TTL after the run. And the count of leases left behind sees a
// leaky variant's. DISTLOCK_SOAK=5m makes it a soak.
func TestProcesses(t *testing.T) {
	drivertest.ProcessRuns{
		Driver:   mysqldriver.Driver{},
		DSN:      procsDSN,
		Settings: conformance.Processes{Duration: conformance.SoakDuration(8 * time.Second), TTL: time.Second, Fenced: true, PauseHolders: true},
		Leftovers: func(t *testing.T, table string) func(*testing.T) int {
			t.Cleanup(func() { dropTable(t, server(t), table) })
			db := admin(t, server(t))
			return func(t *testing.T) int { return liveLeases(t, db, table) }
		},
		Nemesis: func(t *testing.T, _ string, p *conformance.Processes) {
			ours(t)
			p.Faults = mariadb(t)
			db := admin(t, server(t))
			db.SetMaxOpenConns(1)
			p.Actions = map[string]func(*testing.T){
				"kill-connections": func(t *testing.T) { killConnections(t, db, connectionIDs(t, db)) },
			}
		},
		After: func(t *testing.T) { waitServing(t, server(t)) },
	}.Run(t)
}

// procsDSN is the DSN of a fault run on the lease table table, with a
// request timeout short against the run's TTL.
func procsDSN(t testing.TB, table string) string {
	return drivertest.WithParams(server(t), "distlock_table", table, "distlock_request_timeout", "500ms")
}

// liveLeases counts the table's live leases: rows stay (they keep each
// key's fence), a lease that has not expired is a lock.
func liveLeases(t *testing.T, db *sql.DB, table string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var n int
	err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM `"+table+"` WHERE `expires_at` > UTC_TIMESTAMP(6)").Scan(&n)
	if err != nil {
		t.Errorf("counting leftovers: %v", err)
	}
	return n
}
