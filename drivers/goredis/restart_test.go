package goredis_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/internal/redistest"
)

// What Redlock's rule against immediate restarts is for, shown on the real
// servers: a lock granted by exactly a quorum (nodes 0-2, while 3 and 4
// are down), one of whose nodes restarts at once and empty (no persistence),
// is granted again to another client (by nodes 0, 3 and 4) while the first
// still holds it. (Nodes 3 and 4 are down, not hung, while the lock is
// granted: a hung Redis reads the request when it resumes, and would hold
// the key too.) The algorithm requires a restarted node to stay out for
// the longest TTL (or AOF with appendfsync always); RunProcesses's nemesis
// restarts killed nodes only after a TTL, and sees no overlap.
func TestRestart_immediateWithoutPersistenceBreaksExclusion(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a server")
	}
	addrs := redistest.Servers(t)
	faults := redistest.NewFaults(t, 5)
	dsn := redistest.DSN(addrs, "node_timeout=200ms&key_prefix=restart:")
	a, b := openClient(t, dsn), openClient(t, dsn)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	key := "restart/" + time.Now().Format("150405.000000")

	faults.Kill(t, 3)
	faults.Kill(t, 4)
	held, err := a.TryAcquire(ctx, key, lock.WithTTL(30*time.Second))
	faults.Restart(t, 3) // and 4: they come back empty, never having had the key
	if err != nil {
		t.Fatalf("acquisition with 3 of 5 nodes: %v", err)
	}
	defer held.Release(ctx)

	if _, err := b.TryAcquire(ctx, key); !errors.Is(err, lock.ErrNotAcquired) {
		t.Fatalf("before the restart, another client's acquisition: %v, want ErrNotAcquired", err)
	}
	faults.Kill(t, 0)
	faults.Restart(t, 0) // at once, and empty
	// A client of its own: b's pooled connection to node 0 died with it.
	stolen, err := openClient(t, dsn).TryAcquire(ctx, key)
	if err != nil {
		t.Fatalf("after an immediate restart of a node of the quorum, another client's acquisition failed (%v); this test shows the opposite", err)
	}
	defer stolen.Release(ctx)
	if left := time.Until(held.ValidUntil()); left <= 0 {
		t.Fatalf("the first lock's validity ran out (%v) before the second acquisition: nothing shown", left)
	} else {
		t.Logf("two holders of %q at once: the first valid for %v more, the second just granted by nodes 0 (restarted empty), 3 and 4", key, left.Round(time.Millisecond))
	}
}

func openClient(t *testing.T, dsn string) *lock.Client {
	t.Helper()
	c, err := lock.Open("goredis", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
