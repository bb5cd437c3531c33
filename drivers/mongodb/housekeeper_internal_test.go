package mongodb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// A key inserted into at a steady rate is pruned, at every tick, up to
// the newest fence acknowledged a pruneDelay (and at most a tick) before:
// the grants it keeps span pruneDelay and a tick or two, however fast it
// goes, and it keeps a bounded number of marks.
func TestHousekeeper_marks(t *testing.T) {
	h := &housekeeper{prune: true, heads: make(chan headUpdate, headQueue), pending: map[string]superseded{}}
	const perTick = 1000 // fences acknowledged per tick
	start := time.Now()
	step := housekeepingTick / perTick
	fence := int64(1)
	ackedAt := map[int64]time.Time{}
	for tick := 1; tick <= 40; tick++ {
		for range perTick {
			fence++
			at := start.Add(time.Duration(fence) * step)
			ackedAt[fence] = at
			h.inserted("k", fence, at)
		}
		now := start.Add(time.Duration(fence) * step)
		if n := len(h.pending["k"]); n > int(pruneDelay/housekeepingTick)+2 {
			t.Fatalf("tick %d: %d marks, want at most %d", tick, n, int(pruneDelay/housekeepingTick)+2)
		}
		jobs := h.due(now)
		if now.Sub(start) < pruneDelay+2*housekeepingTick {
			continue // nothing may be due yet, or only the first marks
		}
		if len(jobs) != 1 || jobs[0].key != "k" {
			t.Fatalf("tick %d: due %v, want key k", tick, jobs)
		}
		f := jobs[0].fence
		// Safe: f's own insert was acknowledged pruneDelay ago.
		if now.Sub(ackedAt[f]) < pruneDelay {
			t.Fatalf("tick %d: prunes below fence %d, acknowledged %v ago, under pruneDelay", tick, f, now.Sub(ackedAt[f]))
		}
		// Prompt: it keeps no more than pruneDelay and two ticks of grants.
		if kept := fence - f; kept > int64((pruneDelay+2*housekeepingTick)/step) {
			t.Fatalf("tick %d: prunes below fence %d of %d: keeps %d grants, over pruneDelay and two ticks' (%d)",
				tick, f, fence, kept, int64((pruneDelay+2*housekeepingTick)/step))
		}
		h.pruned("k", f)
		for _, m := range h.pending["k"] {
			if m.fence <= f {
				t.Fatalf("tick %d: mark %d kept after pruning below %d", tick, m.fence, f)
			}
		}
	}
}

// A key whose marks are all pruned is forgotten; one over maxCached keys is
// not noted.
func TestHousekeeper_forgets(t *testing.T) {
	h := &housekeeper{prune: true, heads: make(chan headUpdate, headQueue), pending: map[string]superseded{}}
	now := time.Now()
	h.inserted("k", 5, now)
	h.inserted("k", 7, now.Add(housekeepingTick))
	later := now.Add(pruneDelay + 2*housekeepingTick)
	jobs := h.due(later)
	if len(jobs) != 1 || jobs[0].fence != 7 {
		t.Fatalf("due %v, want k below 7", jobs)
	}
	h.pruned("k", 7)
	if _, ok := h.pending["k"]; ok {
		t.Fatalf("k pending after its last mark was pruned: %v", h.pending["k"])
	}
	if jobs := h.due(later); len(jobs) != 0 {
		t.Fatalf("due %v after pruning, want none", jobs)
	}
}

// One call of pruneKey deletes as many grants as are due, in batches of
// pruneBatch, not one batch per tick: a key busier than pruneBatch
// grants a tick would otherwise grow without bound.
func TestHousekeeper_pruneKeyCatchesUp(t *testing.T) {
	uri := drivertest.Lookup(t, "DISTLOCK_MONGODB_URI")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(context.Background())
	b := make([]byte, 4)
	rand.Read(b)
	coll := client.Database("distlock_test").Collection("distlock_prune_" + hex.EncodeToString(b))
	defer coll.Drop(context.Background())

	const key, n = "busy", 3*pruneBatch + 17
	docs := make([]any, 0, n)
	for f := int64(1); f <= n; f++ {
		docs = append(docs, &grant{ID: grantID(key, f), Key: key, Fence: f, Released: f%2 == 0})
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	h := &housekeeper{coll: coll, prune: true, floors: map[string]int64{}}
	done, err := h.pruneKey(ctx, key, n, time.Now().Add(time.Minute))
	if err != nil || !done {
		t.Fatalf("pruneKey = %v, %v; want done", done, err)
	}
	left, err := coll.CountDocuments(ctx, bson.D{{Key: "key", Value: key}})
	if err != nil {
		t.Fatal(err)
	}
	if left != 1 {
		t.Errorf("%d grants left after one pruneKey below fence %d; want 1 (the latest)", left, n)
	}
	var hd head
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: headID(key)}}).Decode(&hd); err != nil {
		t.Fatal(err)
	}
	if hd.Pruned != n || hd.Fence != n {
		t.Errorf("head = %+v, want fence and pruned %d", hd, n)
	}

	// Past its stop, it stops after the batch in hand, and says so.
	for f := int64(n + 1); f <= n+2*pruneBatch; f++ {
		if _, err := coll.InsertOne(ctx, &grant{ID: grantID(key, f), Key: key, Fence: f}); err != nil {
			t.Fatal(err)
		}
	}
	done, err = h.pruneKey(ctx, key, n+2*pruneBatch, time.Now())
	if err != nil || done {
		t.Fatalf("pruneKey past its stop = %v, %v; want not done", done, err)
	}
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: headID(key)}}).Decode(&hd); err != nil {
		t.Fatal(err)
	}
	if hd.Pruned != n+pruneBatch {
		t.Errorf("pruned = %d after one batch past its stop, want %d", hd.Pruned, n+pruneBatch)
	}
}
