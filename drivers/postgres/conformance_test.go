package postgres_test

import (
	"testing"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/postgres"
	"github.com/jackc/pgx/v5/pgxpool"
)

// TestConformance runs the suite on clients opened by DSN, each with a
// pool of its own.
func TestConformance(t *testing.T) {
	dsn := server(t)
	full := withParams(dsn, "distlock_table", freshTable(t, dsn))
	conformance.Run(t, conformance.Harness{
		NewClient: func(t *testing.T) *lock.Client {
			c, err := lock.Open("postgres", full)
			if err != nil {
				t.Fatal(err)
			}
			// Connect now: some cases give an acquisition 50ms, which
			// opening a pool on a loaded machine can take by itself.
			if err := c.Ping(t.Context()); err != nil {
				t.Fatal(err)
			}
			return c
		},
		NewConn: func(t *testing.T) driver.Conn {
			c, err := postgres.Driver{}.Open(full)
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
		Fencing: true,
		Extend:  true,
		Wakeups: true,
		TTL:     ttl,
	})
}

// TestConformance_sharedPool runs the suite on clients that share one
// pool given to postgres.New.
func TestConformance_sharedPool(t *testing.T) {
	dsn := server(t)
	pool, err := pgxpool.New(t.Context(), withParams(dsn, "pool_max_conns", "16"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	connector, err := postgres.New(pool, postgres.Config{Table: freshTable(t, dsn)})
	if err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, conformance.Harness{
		NewClient: func(t *testing.T) *lock.Client { return lock.OpenConnector(connector) },
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
		TTL:     ttl,
	})
}
