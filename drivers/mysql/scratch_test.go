package mysql_test

import (
	"testing"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivertest"
)

// ListScratch lists the scratch tables of the DSN's database that begin
// with a prefix, and nothing else.
func TestListScratch(t *testing.T) {
	dsn := server(t)
	drivertest.ListScratch(t, drivertest.ScratchNamed, func(t testing.TB, ns string) driver.Conn {
		return connect(t, drivertest.WithParams(dsn, "distlock_table", ns))
	})
}
