package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/postgres"
	"github.com/jackc/pgx/v5"
)

// Worker processes contend on one lease table while the nemesis pauses
// holders past their TTL and terminates the workers' backends (their
// pools' connections and their LISTEN connections, mid-hold or not): no
// overlap, no token regression, no lost write, no lease left a TTL after
// the run. And the count of leases left behind sees a leaky variant's.
func TestProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs worker processes and a nemesis")
	}
	base := server(t)
	t.Run("safe", func(t *testing.T) {
		table := conformance.SharedName("distlock_procs_")
		p := conformance.Processes{
			Open: func(t testing.TB) *lock.Client {
				// application_name marks the workers' backends for the nemesis.
				c, err := lock.Open("postgres", withParams(base, "distlock_table", table, "application_name", table))
				if err != nil {
					t.Fatal(err)
				}
				return c
			},
			Duration: conformance.SoakDuration(8 * time.Second), TTL: time.Second, Fenced: true, PauseHolders: true,
		}
		if !conformance.InWorker() {
			db := leaseTable(t, base, table)
			p.Leftovers = db.live
			p.Actions = map[string]func(*testing.T){
				"terminate-backends": func(t *testing.T) {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					if _, err := db.conn.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", table); err != nil {
						t.Errorf("terminating the workers' backends: %v", err)
					}
				},
			}
		}
		rep := conformance.RunProcesses(t, p)
		t.Log(rep)
		conformance.RequireSafe(t, rep)
	})
	t.Run("leaky", func(t *testing.T) {
		table := conformance.SharedName("distlock_procs_leaky_")
		var live func(*testing.T) int
		if !conformance.InWorker() {
			live = leaseTable(t, base, table).live
		}
		conformance.RequireLeftoversSeen(t, func(t testing.TB) driver.Connector {
			cn, err := postgres.Driver{}.OpenConnector(withParams(base, "distlock_table", table))
			if err != nil {
				t.Fatal(err)
			}
			return cn
		}, live)
	})
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
