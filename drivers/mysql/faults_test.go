package mysql_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivertest"
	"github.com/distlock/lock/fencing"
)

// connectionIDs returns the IDs of the server's connections of the user
// distlock, but for db's own.
func connectionIDs(t *testing.T, db *sql.DB) map[int64]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = 'distlock' AND ID <> CONNECTION_ID()")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	ids := make(map[int64]bool)
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids[id] = true
	}
	return ids
}

// killConnections kills the connections ids with KILL CONNECTION, and
// returns how many it killed.
func killConnections(t *testing.T, db *sql.DB, ids map[int64]bool) int {
	t.Helper()
	n := 0
	for id := range ids {
		if _, err := db.Exec("KILL CONNECTION ?", id); err == nil {
			n++
		}
	}
	return n
}

// TestKillConnection_leaseOutlivesIt kills the holder's connections with
// KILL CONNECTION while it holds a lock: nobody else gets the key before
// the holder's validity ends, someone does after, and the holder's client
// works on.
func TestKillConnection_leaseOutlivesIt(t *testing.T) {
	dsn := withTable(t, server(t))
	ad := admin(t, server(t))
	ad.SetMaxOpenConns(1)
	before := connectionIDs(t, ad)
	holder := drivertest.OpenPinged(t, "mysql", dsn)
	ctx := drivertest.Context(t, time.Minute)
	key := "kill/" + drivertest.RandomHex(4)
	held, err := holder.TryAcquire(ctx, key, lock.WithTTL(2*ttl))
	if err != nil {
		t.Fatal(err)
	}
	ids := connectionIDs(t, ad)
	for id := range before {
		delete(ids, id)
	}
	if n := killConnections(t, ad, ids); n == 0 {
		t.Fatal("the holder has no connection to kill")
	}

	waiter := drivertest.OpenPinged(t, "mysql", dsn)
	if _, err := waiter.TryAcquire(ctx, key); !errors.Is(err, lock.ErrNotAcquired) {
		t.Fatalf("TryAcquire just after the holder's connections were killed = %v, want ErrNotAcquired: the lease outlives them", err)
	}
	l, err := waiter.Acquire(ctx, key, lock.WithRetry(lock.FixedDelay(ttl/10)))
	got := time.Now()
	if err != nil {
		t.Fatalf("Acquire after the holder's lease ran out: %v", err)
	}
	if got.Before(held.ValidUntil()) {
		t.Fatalf("the key was taken %v before the holder's validity ran out", held.ValidUntil().Sub(got))
	}
	if err := l.Release(ctx); err != nil {
		t.Errorf("Release by the new holder: %v", err)
	}
	if err := held.Release(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("the former holder's Release = %v, want an error matching ErrNotHeld", err)
	}
	l, err = holder.TryAcquire(ctx, key)
	if err != nil {
		t.Fatalf("the former holder's client cannot acquire: %v", err)
	}
	l.Release(ctx)
}

// TestRestart_tokensGrow kills the server with SIGKILL while a client
// holds a lock, and starts it again: the lease survives (nobody else gets
// the key within its validity), the holder releases it, and the key's
// tokens go on growing from where they were.
func TestRestart_tokensGrow(t *testing.T) {
	if testing.Short() {
		t.Skip("kills the server")
	}
	ours(t)
	m := mariadb(t)
	dsn := withTable(t, server(t))
	a := drivertest.OpenPinged(t, "mysql", dsn)
	ctx := drivertest.Context(t, 2*time.Minute)
	key := "restart/" + drivertest.RandomHex(4)
	var last fencing.Token
	for range 5 {
		l, err := a.TryAcquire(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		last, _ = l.Token()
		l.Release(ctx)
	}
	held, err := a.TryAcquire(ctx, key, lock.WithTTL(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := held.Token()
	if !tok.Newer(last) {
		t.Fatalf("token %v after %v", tok, last)
	}
	last = tok

	t.Cleanup(func() { m.Restart(t, 0) })
	m.Kill(t, 0)
	m.Restart(t, 0)

	b := drivertest.OpenPinged(t, "mysql", dsn)
	if time.Now().Before(held.ValidUntil()) {
		if _, err := b.TryAcquire(ctx, key); !errors.Is(err, lock.ErrNotAcquired) {
			t.Fatalf("TryAcquire of a key held across the restart = %v, want ErrNotAcquired", err)
		}
	} else {
		t.Log("the restart outlasted the lease: its survival is not checked")
	}
	// The holder's pool replaces the connections the crash cut.
	for i := 0; ; i++ {
		err := held.Release(ctx)
		if err == nil || errors.Is(err, lock.ErrNotHeld) {
			break
		}
		if i == 5 {
			t.Fatalf("Release after the restart: %v", err)
		}
		t.Logf("Release after the restart: %v", err)
		time.Sleep(100 * time.Millisecond)
	}
	for _, c := range []*lock.Client{a, b} {
		l, err := c.Acquire(ctx, key)
		if err != nil {
			t.Fatalf("Acquire after the restart: %v", err)
		}
		tok, _ := l.Token()
		if !tok.Newer(last) {
			t.Errorf("token %v after the restart, after %v before it", tok, last)
		}
		last = tok
		l.Release(ctx)
	}
}
