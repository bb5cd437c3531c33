package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/drivers/postgres"
	"github.com/distlock/lock/drivertest"
	"github.com/jackc/pgx/v5"
)

// Worker processes contend on one lease table while the nemesis pauses
// holders past their TTL and terminates the workers' backends (their
// pools' connections and their LISTEN connections, mid-hold or not): no
// overlap, no token regression, no lost write, no lease left a TTL after
// the run. And the count of leases left behind sees a leaky variant's.
func TestProcesses(t *testing.T) { processRuns().Run(t) }

// processRuns is the fault run of the lock and of the semaphore
// (TestProcesses_semaphore).
func processRuns() drivertest.ProcessRuns {
	return drivertest.ProcessRuns{
		Driver:    postgres.Driver{},
		DSN:       procsDSN,
		Settings:  conformance.Processes{Duration: conformance.SoakDuration(8 * time.Second), TTL: time.Second, Fenced: true, PauseHolders: true},
		Leftovers: func(t *testing.T, table string) func(*testing.T) int { return leaseTable(t, server(t), table).live },
		Nemesis:   terminateBackends,
	}
}

// procsDSN is the DSN of a fault run on the lease table table. Its
// application_name marks the workers' backends for the nemesis.
func procsDSN(t testing.TB, table string) string {
	return drivertest.WithParams(server(t), "distlock_table", table, "application_name", table)
}

// terminateBackends gives the nemesis the action of terminating the
// backends of the workers of the run on table.
func terminateBackends(t *testing.T, table string, p *conformance.Processes) {
	conn := admin(t, server(t))
	p.Actions = map[string]func(*testing.T){
		"terminate-backends": func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := conn.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", table); err != nil {
				t.Errorf("terminating the workers' backends: %v", err)
			}
		},
	}
}

// procsTable is a fault run's lease table, dropped when the test ends.
type procsTable struct {
	conn  *pgx.Conn
	ident string
}

func leaseTable(t *testing.T, base, table string) procsTable {
	db := procsTable{admin(t, base), pgx.Identifier{table}.Sanitize()}
	t.Cleanup(func() { db.conn.Exec(context.Background(), "DROP TABLE IF EXISTS "+db.ident) })
	return db
}

// live counts the table's live leases: rows stay (they keep each key's
// fencing counter), a lease that has not expired is a lock.
func (db procsTable) live(t *testing.T) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var n int
	if err := db.conn.QueryRow(ctx, "SELECT count(*) FROM "+db.ident+" WHERE expires_at > clock_timestamp()").Scan(&n); err != nil {
		t.Errorf("counting leftovers: %v", err)
	}
	return n
}
