package mongodb_test

import (
	"context"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/mongodb"
	"github.com/distlock/lock/drivertest"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// ttl is the short lease the tests use where they wait for expiry: well
// above an acquisition's few round trips on a loaded machine (FerretDB
// takes 1-4ms per request by _id when busy, and more when two test
// binaries share the machine's two cores).
const ttl = 1500 * time.Millisecond

// testDB is the database the tests use.
const testDB = "distlock_test"

// server returns the test server's URI, skipping the test without one.
func server(t testing.TB) string {
	t.Helper()
	return drivertest.Lookup(t, "DISTLOCK_MONGODB_URI")
}

// adminClient returns a plain client of the test server, disconnected when
// the test ends.
func adminClient(t testing.TB, uri string) *mongo.Client {
	t.Helper()
	c, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatalf("mongo.Connect: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c.Disconnect(ctx)
	})
	return c
}

// freshCollection returns the name of a grants collection no other test
// uses, and drops it when the test ends.
func freshCollection(t testing.TB, uri string) string {
	t.Helper()
	name := "grants_" + drivertest.RandomHex(6)
	admin := adminClient(t, uri)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := admin.Database(testDB).Collection(name).Drop(ctx); err != nil {
			t.Errorf("dropping collection %s: %v", name, err)
		}
	})
	return name
}

// dsnFor returns a DSN for a fresh collection of the test database.
func dsnFor(t testing.TB, uri string, kv ...string) string {
	t.Helper()
	dsn := drivertest.WithParams(uri, append([]string{"distlock_database", testDB, "distlock_collection", freshCollection(t, uri)}, kv...)...)
	// Create the collection and its index once, here.
	drivertest.Connect(t, mongodb.Driver{}, dsn).Close()
	return dsn
}

// open opens a client on dsn, closed when the test ends.
func open(t testing.TB, dsn string) *lock.Client {
	t.Helper()
	return drivertest.Open(t, "mongodb", dsn)
}
