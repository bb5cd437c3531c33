package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/postgres"
	"github.com/distlock/lock/drivertest"
)

// Drop refuses a table that is not a scratch table of its own, and leaves
// it there: the default table, however it is named, and a table the
// driver was told not to create.
func TestDrop_refusesSharedTables(t *testing.T) {
	dsn := server(t)
	ctx := ctxFor(t, 30*time.Second)
	userTable := freshTable(t, dsn)
	connect(t, drivertest.WithParams(dsn, "distlock_table", userTable)) // creates it
	for _, tc := range []struct{ name, dsn, table string }{
		{"noTable", dsn, postgres.DefaultTable},
		{"defaultNamed", drivertest.WithParams(dsn, "distlock_table", postgres.DefaultTable), postgres.DefaultTable},
		{"defaultWithSchema", drivertest.WithParams(dsn, "distlock_table", "public."+postgres.DefaultTable), postgres.DefaultTable},
		{"notCreated", drivertest.WithParams(dsn, "distlock_table", userTable, "distlock_create_table", "false"), userTable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t, tc.dsn)
			err := c.(driver.Dropper).Drop(ctx)
			if !errors.Is(err, postgres.ErrNotScratch) || !errors.Is(err, driver.ErrMisconfigured) {
				t.Errorf("Drop = %v, want an error matching ErrNotScratch and driver.ErrMisconfigured", err)
			}
			var exists bool
			if err := admin(t, dsn).QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", tc.table).Scan(&exists); err != nil {
				t.Fatal(err)
			}
			if !exists {
				t.Errorf("table %s is gone after a refused Drop", tc.table)
			}
		})
	}
}

// connect opens a raw connection, closed when the test ends.
func connect(t testing.TB, dsn string) driver.Conn {
	t.Helper()
	c := drivertest.Connect(t, postgres.Driver{}, dsn)
	t.Cleanup(func() { c.Close() })
	return c
}
