package mongodb_test

import (
	"errors"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/mongodb"
	"github.com/distlock/lock/drivertest"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestContention has 4 clients (2 goroutines each) take 4 keys in turn
// for n acquisitions in all, and checks the history: no two holdings of a
// key overlap and tokens strictly increase. n is 1,000, or
// $DISTLOCK_MONGODB_ACQUISITIONS (for instance 10000, run by hand).
func TestContention(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: skipped with -short")
	}
	n := drivertest.Acquisitions(t, "DISTLOCK_MONGODB_ACQUISITIONS", 1000)
	var params []string
	if os.Getenv("DISTLOCK_MONGODB_NOPRUNE") != "" { // for comparisons by hand
		params = append(params, "distlock_prune", "false")
	}
	dsn := dsnFor(t, server(t), params...)
	nkeys := 4
	if s := os.Getenv("DISTLOCK_MONGODB_KEYS"); s != "" { // for experiments by hand
		nkeys, _ = strconv.Atoi(s)
	}
	keys := make([]string, max(nkeys, 1))
	for i := range keys {
		keys[i] = "contention/" + drivertest.RandomHex(4) + "/" + strconv.Itoa(i)
	}
	run := drivertest.Contention{
		Clients: []*lock.Client{open(t, dsn), open(t, dsn), open(t, dsn), open(t, dsn)},
		Keys:    keys,
		N:       n,
		TTL:     10 * time.Second,
		Vary:    true,
	}
	run.Run(t, drivertest.Context(t, 30*time.Minute), true)
	var stats lock.Stats
	for _, c := range run.Clients {
		s := c.Stats()
		stats.Contended += s.Contended
		stats.Failed += s.Failed
	}
	t.Logf("%d attempts found the key held, %d failed", stats.Contended, stats.Failed)
}

// TestPruning shortens the pruning delay and checks that superseded
// grants go away, the latest stays, and that clients that know nothing of
// the key, or only a fence that was pruned since, still find the latest
// and continue its tokens.
func TestPruning(t *testing.T) {
	t.Cleanup(mongodb.ShortenTimingForTest(time.Second, 2*time.Second, 100*time.Millisecond))
	uri := server(t)
	dsn := dsnFor(t, uri)
	coll := adminClient(t, uri).Database(testDB).Collection(collectionOf(t, dsn))
	ctx := drivertest.Context(t, 2*time.Minute)
	key := "prune/" + drivertest.RandomHex(4)

	stale := open(t, dsn)
	l, err := stale.TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := l.Token()
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}

	busy := open(t, dsn)
	last := uint64(first)
	const rounds = 40
	for range rounds {
		l, err := busy.TryAcquire(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		tok, _ := l.Token()
		if uint64(tok) <= last {
			t.Fatalf("token %d after %d", tok, last)
		}
		last = uint64(tok)
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Wait for the housekeeper to delete every grant below the latest.
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := coll.CountDocuments(ctx, bson.D{{Key: "key", Value: key}})
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d grants of the key are left 30s after its last acquisition; want 1 (the latest)", n)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The last release inserted a tombstone after the last grant: it is
	// the latest, and what is left.
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: mongodb.GrantID(key, int64(last)+1)}}).Err(); err != nil {
		t.Fatalf("the latest grant: %v", err)
	}
	var hd struct {
		Fence, Pruned int64
	}
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: mongodb.HeadID(key)}}).Decode(&hd); err != nil {
		t.Fatalf("the head document: %v", err)
	}
	if hd.Pruned != int64(last)+1 || hd.Fence != int64(last)+1 {
		t.Errorf("head = %+v, want fence and pruned %d", hd, last+1)
	}

	// stale knows only a fence that was pruned; fresh knows nothing.
	for i, c := range []*lock.Client{stale, open(t, dsn)} {
		l, err := c.TryAcquire(ctx, key)
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		tok, _ := l.Token()
		if uint64(tok) <= last {
			t.Errorf("client %d: token %v after %d", i, tok, last)
		}
		last = uint64(tok)
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDiscovery_lostHints deletes the head document and checks that a
// client that knows nothing of the key still finds its latest grant (by
// probing from fence 1) and refuses a held key.
func TestDiscovery_lostHints(t *testing.T) {
	uri := server(t)
	dsn := dsnFor(t, uri, "distlock_prune", "false")
	coll := adminClient(t, uri).Database(testDB).Collection(collectionOf(t, dsn))
	ctx := drivertest.Context(t, time.Minute)
	key := "hints/" + drivertest.RandomHex(4)
	a := open(t, dsn)
	var held *lock.Lock
	var last uint64
	for i := range 5 {
		l, err := a.TryAcquire(ctx, key, lock.WithTTL(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		tok, _ := l.Token()
		last = uint64(tok)
		if i < 4 {
			l.Release(ctx)
		} else {
			held = l
		}
	}
	time.Sleep(100 * time.Millisecond) // the head update is asynchronous
	if _, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: mongodb.HeadID(key)}}); err != nil {
		t.Fatal(err)
	}
	b := open(t, dsn)
	if _, err := b.TryAcquire(ctx, key); !errors.Is(err, lock.ErrNotAcquired) {
		t.Fatalf("TryAcquire of a held key without its head document = %v, want ErrNotAcquired", err)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	l, err := b.TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if tok, _ := l.Token(); uint64(tok) <= last {
		t.Errorf("token %v after %d", tok, last)
	}
	l.Release(ctx)
}

// collectionOf returns the distlock_collection parameter of a DSN made by
// dsnFor.
func collectionOf(t testing.TB, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || u.Query().Get("distlock_collection") == "" {
		t.Fatalf("no distlock_collection in the DSN (%v)", err)
	}
	return u.Query().Get("distlock_collection")
}
