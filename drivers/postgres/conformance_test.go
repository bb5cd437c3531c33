package postgres_test

import (
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/postgres"
	"github.com/distlock/lock/drivertest"
	"github.com/jackc/pgx/v5/pgxpool"
)

// conformanceTTL is the suite's short lease: long enough for extensions to
// keep a lease alive on a shared, loaded two-core machine.
const conformanceTTL = time.Second

// TestConformance runs the suite on clients opened by DSN, each with a
// pool of its own.
func TestConformance(t *testing.T) {
	dsn := server(t)
	full := drivertest.WithParams(dsn, "distlock_table", freshTable(t, dsn))
	conformance.Run(t, conformance.Harness{
		NewClient: func(t *testing.T) *lock.Client {
			c, err := lock.Open("postgres", full)
			if err != nil {
				t.Fatal(err)
			}
			// Connect now: some cases give an acquisition 50ms, or expect
			// its validity to start within the drift allowance (100ms)
			// of the call, and connecting (opening a pool, making sure
			// of the table) on a loaded machine can take that long.
			if err := c.Ping(t.Context()); err != nil {
				t.Fatal(err)
			}
			return c
		},
		NewDialerClient: drivertest.NewDialerClient("postgres", full),
		NewConn:         func(t *testing.T) driver.Conn { return drivertest.Connect(t, postgres.Driver{}, full) },
		NewScratchConn: func(t *testing.T, name string) driver.Conn {
			return drivertest.Connect(t, postgres.Driver{}, drivertest.WithParams(dsn, "distlock_table", name))
		},
		Fencing: true,
		Extend:  true,
		Wakeups: true,
		TTL:     conformanceTTL,
		Misconfigured: func(t *testing.T) *lock.Client {
			tlsDSN := drivertest.Lookup(t, "DISTLOCK_POSTGRES_TLS_DSN")
			c, err := lock.Open("postgres", drivertest.WithParams(withPassword(t, tlsDSN, "not-the-password-4711"), "distlock_table", freshTable(t, dsn)))
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
	})
}

// TestConformance_sharedPool runs the suite on clients that share one
// pool given to postgres.New.
func TestConformance_sharedPool(t *testing.T) {
	dsn := server(t)
	pool, err := pgxpool.New(t.Context(), drivertest.WithParams(dsn, "pool_max_conns", "16"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	connector, err := postgres.New(pool, postgres.Config{Table: freshTable(t, dsn)})
	if err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, conformance.Harness{
		NewClient: func(t *testing.T) *lock.Client {
			c := lock.OpenConnector(connector)
			if err := c.Ping(t.Context()); err != nil { // see TestConformance
				t.Fatal(err)
			}
			return c
		},
		NewConn: func(t *testing.T) driver.Conn {
			c, err := connector.Connect(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
		Fencing: true,
		Extend:  true,
		Wakeups: true,
		TTL:     conformanceTTL,
	})
}
