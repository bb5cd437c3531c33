package mysql_test

import (
	"errors"
	"testing"
	"time"

	"github.com/distlock/lock/driver"
	mysqldriver "github.com/distlock/lock/drivers/mysql"
	"github.com/distlock/lock/drivertest"
)

// Drop refuses a table that is not a scratch table of its own, and leaves
// it there: the default table, and a table the driver was told not to
// create.
func TestDrop_refusesSharedTables(t *testing.T) {
	dsn := server(t)
	ctx := drivertest.Context(t, 30*time.Second)
	userTable := freshTable(t, dsn)
	connect(t, drivertest.WithParams(dsn, "distlock_table", userTable)) // creates it
	for _, tc := range []struct{ name, dsn, table string }{
		{"noTable", dsn, mysqldriver.DefaultTable},
		{"defaultNamed", drivertest.WithParams(dsn, "distlock_table", mysqldriver.DefaultTable), mysqldriver.DefaultTable},
		{"notCreated", drivertest.WithParams(dsn, "distlock_table", userTable, "distlock_create_table", "false"), userTable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t, tc.dsn)
			err := c.(driver.Dropper).Drop(ctx)
			if !errors.Is(err, mysqldriver.ErrNotScratch) || !errors.Is(err, driver.ErrMisconfigured) {
				t.Errorf("Drop = %v, want an error matching ErrNotScratch and driver.ErrMisconfigured", err)
			}
			var n int
			if err := admin(t, dsn).QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?", tc.table).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Errorf("table %s is gone after a refused Drop", tc.table)
			}
		})
	}
}

// connect opens a raw connection, closed when the test ends.
func connect(t testing.TB, dsn string) driver.Conn {
	t.Helper()
	c := drivertest.Connect(t, mysqldriver.Driver{}, dsn)
	t.Cleanup(func() { c.Close() })
	return c
}
