package mongodb_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/mongodb"
	"github.com/distlock/lock/internal/testenv"
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
	return testenv.Lookup(t, "DISTLOCK_MONGODB_URI")
}

// withParams appends URL query parameters (name, value, name, value...) to
// a URI.
func withParams(uri string, kv ...string) string {
	var b strings.Builder
	b.WriteString(uri)
	sep := "?"
	if strings.Contains(uri, "?") {
		sep = "&"
	}
	for i := 0; i+1 < len(kv); i += 2 {
		b.WriteString(sep + url.QueryEscape(kv[i]) + "=" + url.QueryEscape(kv[i+1]))
		sep = "&"
	}
	return b.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
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
	name := "grants_" + randomHex(6)
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
	dsn := withParams(uri, append([]string{"distlock_database", testDB, "distlock_collection", freshCollection(t, uri)}, kv...)...)
	// Create the collection and its index once, here.
	testenv.Connect(t, mongodb.Driver{}, dsn).Close()
	return dsn
}

// open opens a client on dsn, closed when the test ends.
func open(t testing.TB, dsn string) *lock.Client {
	t.Helper()
	c, err := lock.Open("mongodb", dsn)
	if err != nil {
		t.Fatalf("lock.Open: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
