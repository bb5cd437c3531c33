package mongodb_test

import (
	"testing"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/mongodb"
	"github.com/distlock/lock/drivertest"
)

// ListScratch lists the collections of the database that begin with a
// prefix, and nothing else. FerretDB v1 takes listCollections' $regex
// filter (measured: ^a_b matches a_b1 and not axb1).
func TestListScratch(t *testing.T) {
	uri := server(t)
	drivertest.ListScratch(t, drivertest.ScratchNamed, func(t testing.TB, ns string) driver.Conn {
		c := drivertest.Connect(t, mongodb.Driver{}, drivertest.WithParams(uri, "distlock_database", testDB, "distlock_collection", ns))
		t.Cleanup(func() { c.Close() })
		return c
	})
}
