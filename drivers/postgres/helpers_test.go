package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivertest"
	"github.com/jackc/pgx/v5"
)

// ttl is the short lease the tests use where they wait for expiry: well
// above a round trip on a loaded machine.
const ttl = 500 * time.Millisecond

// server returns the test server's DSN, skipping the test without one.
func server(t testing.TB) string {
	t.Helper()
	return drivertest.Lookup(t, "DISTLOCK_POSTGRES_DSN")
}

// freshTable returns the name of a lease table no other test uses, and
// drops the table when the test ends.
func freshTable(t testing.TB, dsn string) string {
	t.Helper()
	name := "distlock_test_" + drivertest.RandomHex(6)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("dropping table %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS "+pgx.Identifier{name}.Sanitize()); err != nil {
			t.Errorf("dropping table %s: %v", name, err)
		}
	})
	return name
}

// admin returns a plain connection to the test database, closed when the
// test ends.
func admin(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// open opens a client on dsn, closed when the test ends.
func open(t testing.TB, dsn string) *lock.Client {
	t.Helper()
	return drivertest.Open(t, "postgres", dsn)
}

// ctxFor is drivertest.Context.
func ctxFor(t testing.TB, d time.Duration) context.Context { return drivertest.Context(t, d) }
