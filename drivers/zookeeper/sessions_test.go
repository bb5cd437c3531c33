package zookeeper_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/zookeeper"
	"github.com/distlock/lock/drivertest"
	"github.com/go-zookeeper/zk"
)

// TestExtend_otherTTLMovesNodeKeepsToken extends a lock of a 2s TTL to 4s:
// its node moves to the session of 4s (a "+" node), the key stays held
// throughout and keeps its token, and it outlives its first TTL.
func TestExtend_otherTTLMovesNodeKeepsToken(t *testing.T) {
	theEnsemble(t).healthy(t, 30*time.Second)
	full, root := dsn(t)
	ctx := drivertest.Context(t, time.Minute)
	c, other := open(t, full), open(t, full)
	zc := rawConn(t)
	const key = "moved"
	l, err := c.TryAcquire(ctx, key, lock.WithTTL(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := l.Token()
	before := children(t, zc, root+"/"+key)
	if err := l.Extend(ctx, 4*time.Second); err != nil {
		t.Fatalf("Extend to another TTL: %v", err)
	}
	after := children(t, zc, root+"/"+key)
	if len(before) != 1 || len(after) != 1 || !strings.HasPrefix(after[0], "+") || strings.TrimPrefix(after[0], "+")[:10] != before[0][:10] {
		t.Fatalf("children before and after Extend: %q, %q; want one node, then it moved (+)", before, after)
	}
	_, st1, _ := zc.Exists(root + "/" + key + "/" + after[0])
	if h, held, err := other.Inspect(ctx, key); err != nil || !held || h.Token != tok || h.TTL <= 0 || h.TTL > 4*time.Second {
		t.Errorf("Inspect after the move = %+v, %v, %v; want token %v and a TTL within 4s", h, held, err, tok)
	}
	time.Sleep(3 * time.Second) // past the first TTL
	if _, err := other.TryAcquire(ctx, key); !errors.Is(err, lock.ErrNotAcquired) {
		t.Fatalf("TryAcquire 3s after a 2s lock was extended to 4s = %v, want ErrNotAcquired", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatalf("Release of the moved lock: %v", err)
	}
	l2, err := other.TryAcquire(ctx, key)
	if err != nil {
		t.Fatalf("TryAcquire after the release: %v", err)
	}
	if tok2, _ := l2.Token(); !tok2.Newer(tok) || uint64(tok2) <= uint64(st1.Czxid) {
		t.Errorf("token after the moved lock = %v, want newer than %v and than the moved node's zxid %d", tok2, tok, st1.Czxid)
	}
	l2.Release(ctx)
}

// children lists path's children as the leader has them: a member's own
// reads may lag behind (the sync makes it catch up first).
func children(t testing.TB, zc *zk.Conn, path string) []string {
	t.Helper()
	if _, err := zc.Sync(path); err != nil {
		t.Fatalf("Sync(%s): %v", path, err)
	}
	kids, _, err := zc.Children(path)
	if err != nil {
		t.Fatalf("Children(%s): %v", path, err)
	}
	return kids
}

// TestNew_servesItsSessionsTTL opens a connector on a connection of the
// caller's: it serves the TTL equal to its session timeout, and refuses
// others with ErrSessionTimeout, not as held.
func TestNew_servesItsSessionsTTL(t *testing.T) {
	theEnsemble(t).healthy(t, 30*time.Second)
	zc, events, err := zk.Connect(servers(t), 3*time.Second, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		zc.Close()
		for range events {
		}
	}()
	cn, err := zookeeper.New(zc, zookeeper.Config{SessionTimeout: 3 * time.Second, Root: "/distlock-test/" + drivertest.RandomHex(4)})
	if err != nil {
		t.Fatal(err)
	}
	c := lock.OpenConnector(cn)
	defer c.Close()
	ctx := drivertest.Context(t, 30*time.Second)
	l, err := c.TryAcquire(ctx, "k", lock.WithTTL(3*time.Second))
	if err != nil {
		t.Fatalf("TryAcquire with the session's TTL: %v", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = c.TryAcquire(ctx, "k", lock.WithTTL(5*time.Second))
	if !errors.Is(err, zookeeper.ErrSessionTimeout) || errors.Is(err, lock.ErrNotAcquired) {
		t.Errorf("TryAcquire with another TTL = %v, want an error matching ErrSessionTimeout, not ErrNotAcquired", err)
	}
	if _, err := zookeeper.New(zc, zookeeper.Config{}); err == nil {
		t.Error("New without Config.SessionTimeout succeeded")
	}
}

// TestDigest_nodesAreTheUsers opens a client as a digest user: its nodes
// are the user's, and a session without the user's credentials can
// neither read nor delete them.
func TestDigest_nodesAreTheUsers(t *testing.T) {
	theEnsemble(t).healthy(t, 30*time.Second)
	// A root of its own at the top: its ACL must not fall on other tests'
	// nodes.
	root := "/distlock-test-digest-" + drivertest.RandomHex(4)
	full := "zk://app:s3cr3t-pw@" + strings.Join(servers(t), ",") + root + "?request_timeout=2s&member_timeout=500ms"
	c := open(t, full)
	ctx := drivertest.Context(t, 30*time.Second)
	l, err := c.TryAcquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	zc := rawConn(t)
	if _, _, err := zc.Children(root); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("Children(%s) without credentials = %v, want zk.ErrNoAuth", root, err)
	}
	if err := zc.Delete(root+"/k", -1); !errors.Is(err, zk.ErrNoAuth) && !errors.Is(err, zk.ErrNotEmpty) {
		t.Errorf("Delete of the key's node without credentials = %v, want zk.ErrNoAuth", err)
	}
	t.Cleanup(func() {
		// Remove the root, as the user, once the client let go.
		authed := rawConn(t)
		if err := authed.AddAuth("digest", []byte("app:s3cr3t-pw")); err != nil {
			t.Log(err)
			return
		}
		authed.Delete(root+"/k", -1)
		authed.Delete(root, -1)
	})
}
