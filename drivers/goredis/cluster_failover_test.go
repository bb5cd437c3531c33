package goredis_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/redlock"
	"github.com/distlock/lock/fencing"
	"github.com/distlock/lock/internal/redistest"
)

// TestCluster_failover shows what a failover does to a lock on a Redis
// Cluster that is one Redlock node. In each case a shard's replica misses
// a grant and takes over: it is hung before the grant and cut from its
// master, the master is killed after the grant, and the replica, resumed,
// is promoted (CLUSTER FAILOVER TAKEOVER). Every node appends each write
// to its file and fsyncs it (appendfsync always), which saves nothing:
// the promoted replica never had the write. One cluster of four shards
// with a replica each serves the four cases, a shard each, and two
// clusters of one master join it as the other nodes of N=3.
func TestCluster_failover(t *testing.T) {
	always := []string{"--appendonly", "yes", "--appendfsync", "always"}
	clusters := redistest.StartClusters(t,
		redistest.ClusterSpec{Masters: 4, Replicas: 1, Args: always},
		redistest.ClusterSpec{Masters: 1},
		redistest.ClusterSpec{Masters: 1})
	c := clusters[0]
	for i := range c.Shards() {
		v, err := c.Do(c.Master(i), "CONFIG", "GET", "appendfsync")
		if got, _ := v.([]any); err != nil || !slices.Equal(got, []any{"appendfsync", "always"}) {
			t.Fatalf("CONFIG GET appendfsync on %s: %v, %v", c.Master(i), v, err)
		}
	}
	t.Run("N=1/grantedTwice", func(t *testing.T) { grantedTwice(t, c, 0) })
	t.Run("N=1/fencing", func(t *testing.T) { tokensAfterFailover(t, c, 1) })
	t.Run("N=3/quorumRefuses", func(t *testing.T) { quorumRefuses(t, clusters, 2) })
	t.Run("N=1/replicatedRefuses", func(t *testing.T) { replicatedRefuses(t, c, 3) })
}

// failoverTTL is the TTL of the locks that a failover loses: far beyond
// each case, so that the first holder's lock is still valid at the end.
const failoverTTL = time.Minute

// grantedTwice: at N=1, the promoted replica grants the key again while
// the first holder's lock is valid, the double grant the Redis document
// warns of.
func grantedTwice(t *testing.T, c *redistest.Cluster, shard int) {
	ctx := failoverContext(t)
	key := keyOnShard(t, c, shard, "twice")
	first := clusterClient(t, []*redistest.Cluster{c}, false)
	var held *lock.Lock
	failOver(t, c, shard, true, func() { held = mustTake(t, ctx, first, key) })
	lost(t, c, shard, key)

	second := clusterClient(t, []*redistest.Cluster{c}, false)
	l, err := second.TryAcquire(ctx, key, lock.WithTTL(failoverTTL))
	if err != nil {
		t.Fatalf("a second client after the failover: %v; want the key granted again", err)
	}
	if now := time.Now(); !now.Before(held.ValidUntil()) {
		t.Fatalf("the first lock ran out at %v, before the second grant at %v", held.ValidUntil(), now)
	}
	t.Logf("%q granted twice: to %s, valid for %v more, and to %s", key, held.ID(), time.Until(held.ValidUntil()).Round(time.Second), l.ID())
}

// tokensAfterFailover: at N=1 with fencing tokens, the promoted replica's
// counters are those it had before it was cut off. A key granted once
// since then gets the same token again, and a key granted three times
// gets a token older than its holder's. A guard at the resource admits
// both holders of the first, and refuses the second holder of the other.
func tokensAfterFailover(t *testing.T, c *redistest.Cluster, shard int) {
	ctx := failoverContext(t)
	same, back := keyOnShard(t, c, shard, "same"), keyOnShard(t, c, shard, "back")
	first := clusterClient(t, []*redistest.Cluster{c}, true)
	for _, key := range []string{same, back} {
		// Token 1, which the replica receives.
		if err := mustTake(t, ctx, first, key).Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var heldSame, heldBack *lock.Lock
	failOver(t, c, shard, true, func() {
		for range 2 {
			if err := mustTake(t, ctx, first, back).Release(ctx); err != nil {
				t.Fatal(err)
			}
		}
		heldSame, heldBack = mustTake(t, ctx, first, same), mustTake(t, ctx, first, back)
	})
	lost(t, c, shard, same)

	second := clusterClient(t, []*redistest.Cluster{c}, true)
	gotSame, gotBack := mustTake(t, ctx, second, same), mustTake(t, ctx, second, back)
	t1, t2 := token(t, heldSame), token(t, gotSame)
	if t2 != t1 {
		t.Errorf("%q: token %v, then %v after the failover; want the same token twice", same, t1, t2)
	}
	b1, b2 := token(t, heldBack), token(t, gotBack)
	if b2 >= b1 {
		t.Errorf("%q: token %v, then %v after the failover; want it to go back", back, b1, b2)
	}
	g := fencing.NewMemoryGuard()
	for _, tok := range []fencing.Token{t1, t2} {
		if err := g.Admit(ctx, same, tok); err != nil {
			t.Errorf("a guard refused token %v of %q: %v; want both holders admitted", tok, same, err)
		}
	}
	if err := g.Admit(ctx, back, b1); err != nil {
		t.Fatal(err)
	}
	if err := g.Admit(ctx, back, b2); !errors.Is(err, fencing.ErrStale) {
		t.Errorf("a guard admitted token %v of %q after %v: %v; want it stale", b2, back, b1, err)
	}
	t.Logf("tokens granted twice: %q %v and %v, %q %v and %v", same, t1, t2, back, b1, b2)
}

// quorumRefuses: at N=3, where one cluster's failover loses the grant on
// one node only, the other two still hold it, and a second client is
// refused.
func quorumRefuses(t *testing.T, clusters []*redistest.Cluster, shard int) {
	ctx := failoverContext(t)
	c := clusters[0]
	key := keyOnShard(t, c, shard, "quorum")
	first := clusterClient(t, clusters, true)
	failOver(t, c, shard, true, func() { mustTake(t, ctx, first, key) })
	lost(t, c, shard, key)
	for _, other := range clusters[1:] {
		if v, err := other.Do(other.Master(0), "GET", lockName(key)); err != nil || v == nil {
			t.Fatalf("%s has no %q (%v): want the grant there", other.Master(0), lockName(key), err)
		}
	}

	second := clusterClient(t, clusters, true)
	if _, err := second.TryAcquire(ctx, key); !errors.Is(err, lock.ErrNotAcquired) {
		t.Fatalf("a second client after one node's failover: %v; want lock.ErrNotAcquired", err)
	}
}

// replicatedRefuses is grantedTwice without the cut: the grant waits in
// the hung replica's socket, the replica applies it once resumed, and a
// second client is refused. It shows that the cut is what makes the
// replica miss the grant, and that grantedTwice's check can fail.
func replicatedRefuses(t *testing.T, c *redistest.Cluster, shard int) {
	ctx := failoverContext(t)
	key := keyOnShard(t, c, shard, "replicated")
	first := clusterClient(t, []*redistest.Cluster{c}, false)
	failOver(t, c, shard, false, func() { mustTake(t, ctx, first, key) })
	if v, err := c.Do(c.Master(shard), "GET", lockName(key)); err != nil || v == nil {
		t.Fatalf("the promoted replica %s has no %q (%v): want the grant replicated", c.Master(shard), lockName(key), err)
	}

	second := clusterClient(t, []*redistest.Cluster{c}, false)
	if _, err := second.TryAcquire(ctx, key); !errors.Is(err, lock.ErrNotAcquired) {
		t.Fatalf("a second client after the failover: %v; want lock.ErrNotAcquired", err)
	}
}

// failOver runs grant while shard's replica is hung, then kills the
// shard's master and promotes the replica. With cut, the master first
// closes its replication link, so that the replica misses every write of
// grant. Without it, those writes wait in the hung replica's socket, and
// arrive.
func failOver(t *testing.T, c *redistest.Cluster, shard int, cut bool, grant func()) {
	t.Helper()
	c.Synced(t, shard)
	replica := c.Replica(shard)
	c.Hang(t, replica)
	if cut {
		if n := c.CutReplication(t, shard); n != 1 {
			t.Fatalf("CLIENT KILL TYPE replica closed %d links, want 1", n)
		}
	}
	grant()
	c.Kill(t, c.Master(shard))
	c.Resume(t, replica)
	c.Takeover(t, shard)
}

// lost fails the test unless shard's master lacks key's lock.
func lost(t *testing.T, c *redistest.Cluster, shard int, key string) {
	t.Helper()
	if v, err := c.Do(c.Master(shard), "GET", lockName(key)); err != nil || v != nil {
		t.Fatalf("the promoted replica %s has %q: %v, %v; want the grant missing", c.Master(shard), lockName(key), v, err)
	}
}

// lockName is the Redis key of key's lock, as the redlock package names
// it with its default prefix.
func lockName(key string) string { return redlock.DefaultKeyPrefix + "{" + key + "}" }

// keyOnShard returns a key, named after name, whose lock is on shard of c.
func keyOnShard(t *testing.T, c *redistest.Cluster, shard int, name string) string {
	t.Helper()
	for i := range 1000 {
		key := fmt.Sprintf("%s/%d", name, i)
		if c.Shard(t, lockName(key)) == shard {
			return key
		}
	}
	t.Fatalf("no key of 1000 on shard %d", shard)
	return ""
}

func failoverContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// mustTake takes key through c for failoverTTL, or fails the test.
func mustTake(t *testing.T, ctx context.Context, c *lock.Client, key string) *lock.Lock {
	t.Helper()
	l, err := c.TryAcquire(ctx, key, lock.WithTTL(failoverTTL))
	if err != nil {
		t.Fatalf("TryAcquire(%q): %v", key, err)
	}
	return l
}

// token returns l's fencing token, or fails the test.
func token(t *testing.T, l *lock.Lock) fencing.Token {
	t.Helper()
	tok, ok := l.Token()
	if !ok {
		t.Fatalf("lock %s of %q has no token", l.ID(), l.Key())
	}
	return tok
}
