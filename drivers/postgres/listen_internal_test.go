package postgres

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
	"github.com/jackc/pgx/v5"
)

// TestListener_idlePings lets the listener sit idle through several pings
// and checks that it kept its connection and still hears releases.
func TestListener_idlePings(t *testing.T) {
	dsn := drivertest.Lookup(t, "DISTLOCK_POSTGRES_DSN")
	defer func(d time.Duration) { listenIdle = d }(listenIdle)
	listenIdle = 50 * time.Millisecond

	channel := "distlock_test_idle_" + time.Now().Format("150405.000000")
	var connects atomic.Int32
	l := newListener(channel, func(ctx context.Context) (*pgx.Conn, error) {
		connects.Add(1)
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return nil, err
		}
		if _, err := c.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
			c.Close(ctx)
			return nil, err
		}
		return c, nil
	})
	defer l.close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := l.watch(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	time.Sleep(10 * listenIdle)

	notifier, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer notifier.Close(ctx)
	for _, key := range []string{"other", "k"} {
		if _, err := notifier.Exec(ctx, "SELECT pg_notify($1, $2)", channel, key); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-w.Released():
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up for a release announced after the listener sat idle")
	}
	if n := connects.Load(); n != 1 {
		t.Errorf("the listener connected %d times; want once: pings must not cost it its connection", n)
	}
	select {
	case <-w.Released():
		t.Error("a second wake-up: the notification for another key woke this watcher")
	case <-time.After(200 * time.Millisecond):
	}
}
