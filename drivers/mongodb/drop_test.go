package mongodb_test

import (
	"errors"
	"testing"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/mongodb"
	"github.com/distlock/lock/drivertest"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Drop refuses a collection that is not a scratch collection of its own,
// and leaves it there: the default collection, in any database, and a
// collection the driver was told not to create.
func TestDrop_refusesSharedCollections(t *testing.T) {
	uri := server(t)
	ctx := drivertest.Context(t, 30*time.Second)
	userColl := freshCollection(t, uri)
	connect(t, drivertest.WithParams(uri, "distlock_database", testDB, "distlock_collection", userColl)) // creates it
	for _, tc := range []struct{ name, dsn, coll string }{
		{"noCollection", drivertest.WithParams(uri, "distlock_database", testDB), mongodb.DefaultCollection},
		{"defaultNamed", drivertest.WithParams(uri, "distlock_database", testDB, "distlock_collection", mongodb.DefaultCollection), mongodb.DefaultCollection},
		{"notCreated", drivertest.WithParams(uri, "distlock_database", testDB, "distlock_collection", userColl, "distlock_create_collection", "false"), userColl},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t, tc.dsn)
			err := c.(driver.Dropper).Drop(ctx)
			if !errors.Is(err, mongodb.ErrNotScratch) || !errors.Is(err, driver.ErrMisconfigured) {
				t.Errorf("Drop = %v, want an error matching ErrNotScratch and driver.ErrMisconfigured", err)
			}
			names, err := adminClient(t, uri).Database(testDB).ListCollectionNames(ctx, bson.D{{Key: "name", Value: tc.coll}})
			if err != nil {
				t.Fatal(err)
			}
			if len(names) == 0 {
				t.Errorf("collection %s is gone after a refused Drop", tc.coll)
			}
		})
	}
}

// connect opens a raw connection, closed when the test ends.
func connect(t *testing.T, dsn string) driver.Conn {
	t.Helper()
	c := drivertest.Connect(t, mongodb.Driver{}, dsn)
	t.Cleanup(func() { c.Close() })
	return c
}
