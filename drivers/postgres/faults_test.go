package postgres_test

import (
	"context"
	"errors"
	"os/exec"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivertest"
	"github.com/jackc/pgx/v5"
)

// waitFor polls cond until it holds, failing the test after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// terminate terminates the backends of the connections named app (only
// those listening, if listeners) and, if wait, waits until they are gone.
// It returns how many there were.
func terminate(t *testing.T, admin *pgx.Conn, app string, listeners, wait bool) int {
	t.Helper()
	timeout := 0 // milliseconds; 0: do not wait
	if wait {
		timeout = 5000
	}
	var n int
	err := admin.QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, $3))
FROM pg_stat_activity WHERE application_name = $1 AND (NOT $2 OR query LIKE 'LISTEN%')`, app, listeners, timeout).Scan(&n)
	if err != nil {
		t.Fatalf("terminating the backends of %s: %v", app, err)
	}
	return n
}

// listening returns the process IDs of the backends of the connections
// named app that listen.
func listening(t *testing.T, admin *pgx.Conn, app string) []int32 {
	t.Helper()
	rows, _ := admin.Query(context.Background(),
		`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'`, app)
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		t.Fatalf("pg_stat_activity: %v", err)
	}
	return pids
}

type acquired struct {
	l   *lock.Lock
	err error
	at  time.Time
}

// waitInBackground starts c.Acquire(key), polling only once a minute, so
// that only a wake-up gets it the key in time.
func waitInBackground(ctx context.Context, c *lock.Client, key string) <-chan acquired {
	return waitPolling(ctx, c, key, time.Minute)
}

// waitPolling is waitInBackground with a poll every poll.
func waitPolling(ctx context.Context, c *lock.Client, key string, poll time.Duration) <-chan acquired {
	got := make(chan acquired, 1)
	go func() {
		l, err := c.Acquire(ctx, key, lock.WithRetry(lock.FixedDelay(poll)))
		got <- acquired{l, err, time.Now()}
	}()
	return got
}

// TestTerminate_holderConnection cuts the holder's connections while it
// holds a lock: the lock stays held until its TTL runs out, then someone
// else gets it; nobody else notices anything, and the holder's client
// works on.
func TestTerminate_holderConnection(t *testing.T) {
	dsn := server(t)
	table := freshTable(t, dsn)
	app := "distlock-test-holder-" + drivertest.RandomHex(4)
	holder := open(t, drivertest.WithParams(dsn, "distlock_table", table, "application_name", app))
	waiter := open(t, drivertest.WithParams(dsn, "distlock_table", table))
	bystander := open(t, drivertest.WithParams(dsn, "distlock_table", table))
	ad := admin(t, dsn)
	ctx := drivertest.Context(t, time.Minute)
	key, other := "terminate/"+drivertest.RandomHex(4), "terminate/other/"+drivertest.RandomHex(4)

	held, err := holder.TryAcquire(ctx, key, lock.WithTTL(2*ttl))
	if err != nil {
		t.Fatal(err)
	}
	busy, err := bystander.TryAcquire(ctx, other, lock.WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if n := terminate(t, ad, app, false, true); n == 0 {
		t.Fatal("the holder has no connection to terminate")
	}

	if _, err := waiter.TryAcquire(ctx, key); !errors.Is(err, lock.ErrNotAcquired) {
		t.Fatalf("TryAcquire just after the holder's connection was cut = %v, want an error matching ErrNotAcquired: the lock outlives the connection", err)
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

	// The bystander noticed nothing.
	if err := busy.Extend(ctx, time.Minute); err != nil {
		t.Errorf("the bystander's Extend: %v", err)
	}
	if _, err := waiter.TryAcquire(ctx, other); !errors.Is(err, lock.ErrNotAcquired) {
		t.Errorf("TryAcquire of the bystander's key = %v, want an error matching ErrNotAcquired", err)
	}
	if err := busy.Release(ctx); err != nil {
		t.Errorf("the bystander's Release: %v", err)
	}

	// The holder learns that its lock is gone (perhaps after an error
	// from a connection that was cut), and its client works on.
	for i := 0; ; i++ {
		err := held.Release(ctx)
		if errors.Is(err, lock.ErrNotHeld) {
			break
		}
		if err == nil || i == 3 {
			t.Fatalf("the former holder's Release = %v, want an error matching ErrNotHeld", err)
		}
		t.Logf("the former holder's Release, attempt %d: %v", i+1, err)
	}
	l, err = holder.Acquire(ctx, key)
	if err != nil {
		t.Fatalf("the former holder's client cannot acquire: %v", err)
	}
	l.Release(ctx)
}

// TestTerminate_listenerConnection cuts a waiter's listening connection
// and releases the key, either at once (most likely before the listener is
// back, so that only its waking everyone after reconnecting saves the
// waiter) or once the connection is gone (by when the listener has usually
// reconnected, and hears the release): either way, the waiter wakes long
// before its next poll.
func TestTerminate_listenerConnection(t *testing.T) {
	dsn := server(t)
	table := freshTable(t, dsn)
	app := "distlock-test-waiter-" + drivertest.RandomHex(4)
	holder := open(t, drivertest.WithParams(dsn, "distlock_table", table))
	waiter := open(t, drivertest.WithParams(dsn, "distlock_table", table, "application_name", app))
	ad := admin(t, dsn)
	ctx := drivertest.Context(t, time.Minute)
	key := "listener/" + drivertest.RandomHex(4)

	for round := 1; round <= 4; round++ {
		held, err := holder.Acquire(ctx, key, lock.WithTTL(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		got := waitInBackground(ctx, waiter, key)
		waitFor(t, 10*time.Second, "the waiter to listen", func() bool { return len(listening(t, ad, app)) == 1 })
		time.Sleep(50 * time.Millisecond) // let the waiter settle into its wait
		if n := terminate(t, ad, app, true, round%2 == 0); n != 1 {
			t.Fatalf("terminated %d listening connections, want 1", n)
		}
		released := time.Now()
		if err := held.Release(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-got:
			if r.err != nil {
				t.Fatalf("round %d: Acquire: %v", round, r.err)
			}
			t.Logf("round %d: the waiter got the key %v after the release", round, r.at.Sub(released))
			r.l.Release(ctx)
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the waiter did not wake within 10s of a release made while its listening connection was down", round)
		}
	}
}

// TestRestart_clientsSurvive restarts the server while one client holds a
// lock and another waits for it: after the restart the lease is still
// there, the holder releases it, the waiter wakes through its reconnected
// listener, and both clients work on.
func TestRestart_clientsSurvive(t *testing.T) {
	if testing.Short() {
		skipShort(t)
	}
	dsn := server(t)
	drivertest.Lookup(t, "DISTLOCK_SERVICES_DIR") // the server is ours to restart
	script := drivertest.ServicesScript(t)
	table := freshTable(t, dsn)
	app := "distlock-test-restart-" + drivertest.RandomHex(4)
	a := open(t, drivertest.WithParams(dsn, "distlock_table", table))
	b := open(t, drivertest.WithParams(dsn, "distlock_table", table, "application_name", app))
	ad := admin(t, dsn)
	ctx := drivertest.Context(t, 2*time.Minute)
	key := "restart/" + drivertest.RandomHex(4)

	held, err := a.TryAcquire(ctx, key, lock.WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	// Across the restart the waiter also polls every 5s: once in five
	// fresh-clone CI runs its first wake-up after the restart did not come
	// within 15s, and that is not diagnosed for sure. The likeliest cause:
	// the test restarted the server as soon as the waiter's LISTEN showed,
	// which is before its Watch marks the key's row as waited for; on a
	// loaded machine the marking could meet the restart and fail, and the
	// waiter then went on without a subscription, polling once a minute.
	// Package lock now subscribes again within 10ms
	// (TestAcquire_failedSubscriptionIsRetriedSoon), and the test waits for
	// the mark too. (Another candidate, an attempt at the listener's return
	// that fails on a pooled connection the restart cut, is retried within
	// 10ms too, TestAcquire_backendErrorAfterAWakeUpRetriesSoon; but the
	// listener's reconnection is the first to take such a connection from
	// the pool.) The wait through a's new listener below relies on wake-ups
	// alone.
	got := waitPolling(ctx, b, key, 5*time.Second)
	waitFor(t, 10*time.Second, "the waiter to listen", func() bool { return len(listening(t, ad, app)) == 1 })
	waitFor(t, 10*time.Second, "the key to be marked as waited for", func() bool {
		var watched bool
		err := ad.QueryRow(ctx, "SELECT watched FROM "+pgx.Identifier{table}.Sanitize()+" WHERE key = $1", key).Scan(&watched)
		return err == nil && watched
	})

	out, err := exec.CommandContext(ctx, script, "restart-postgres").CombinedOutput()
	if err != nil {
		t.Fatalf("services.sh restart-postgres: %v\n%s", err, out)
	}
	t.Logf("services.sh restart-postgres:\n%s", out)
	ad = admin(t, dsn) // the old one was cut

	// The lease survived the restart, and its holder can release it once
	// its pool has replaced the connections that were cut.
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := held.Release(ctx)
		if err == nil {
			break
		}
		if errors.Is(err, lock.ErrNotHeld) || time.Now().After(deadline) {
			t.Fatalf("Release after the restart = %v, want success", err)
		}
		t.Logf("Release after the restart: %v", err)
		time.Sleep(100 * time.Millisecond)
	}
	released := time.Now()
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("the waiter's Acquire: %v", r.err)
		}
		t.Logf("the waiter got the key %v after the release", r.at.Sub(released))
		held = r.l
	case <-time.After(15 * time.Second):
		t.Fatal("the waiter did not wake within 15s of the release: its listener did not come back")
	}

	// Wake-ups work the other way round too, through a's new listener.
	got = waitInBackground(ctx, a, key)
	time.Sleep(200 * time.Millisecond)
	released = time.Now()
	if err := held.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("Acquire: %v", r.err)
		}
		t.Logf("a got the key %v after the release", r.at.Sub(released))
		r.l.Release(ctx)
	case <-time.After(15 * time.Second):
		t.Fatal("a did not wake within 15s of the release")
	}
	// b's waiter may have got the key by its 5s poll, before its listener
	// was back (make test, under load: 0 listening here); the listener
	// comes back all the same, and only once.
	n := 0
	waitFor(t, 10*time.Second, "b's listener to come back", func() bool {
		n = len(listening(t, ad, app))
		return n >= 1
	})
	time.Sleep(200 * time.Millisecond)
	if n = len(listening(t, ad, app)); n != 1 {
		t.Errorf("b has %d listening connections after the restart, want 1", n)
	}
}

func skipShort(t *testing.T) {
	t.Helper()
	t.Skip("skipped with -short")
}
