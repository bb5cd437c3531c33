package postgres_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/drivertest"
	"github.com/jackc/pgx/v5"
)

// TestNotify_onlyWaitedForKeys listens on the table's channel: releases of
// a key nobody ever waited for are not announced; once someone has waited
// for a key, every release of it is, with the key as payload.
func TestNotify_onlyWaitedForKeys(t *testing.T) {
	dsn := server(t)
	table := freshTable(t, dsn)
	full := drivertest.WithParams(dsn, "distlock_table", table)
	a, b := open(t, full), open(t, full)
	ctx := drivertest.Context(t, time.Minute)
	if err := a.Ping(ctx); err != nil { // creates the table
		t.Fatal(err)
	}
	ln := admin(t, dsn)
	if _, err := ln.Exec(ctx, "LISTEN "+pgx.Identifier{table}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	next := func(within time.Duration) string {
		wctx, cancel := context.WithTimeout(ctx, within)
		defer cancel()
		n, err := ln.WaitForNotification(wctx)
		if err != nil {
			return ""
		}
		return n.Payload
	}

	quiet, waited := "notify/quiet/"+drivertest.RandomHex(4), "notify/waited/"+drivertest.RandomHex(4)
	for range 3 {
		l, err := a.TryAcquire(ctx, quiet)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if p := next(300 * time.Millisecond); p != "" {
		t.Fatalf("a release of a key nobody waited for was announced (payload %q)", p)
	}

	held, err := a.TryAcquire(ctx, waited)
	if err != nil {
		t.Fatal(err)
	}
	got := waitInBackground(ctx, b, waited)
	waitFor(t, 10*time.Second, "the key to be marked as waited for", func() bool {
		var w bool
		admin(t, dsn).QueryRow(ctx, "SELECT watched FROM "+pgx.Identifier{table}.Sanitize()+" WHERE key = $1", waited).Scan(&w)
		return w
	})
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if p := next(10 * time.Second); p != waited {
		t.Fatalf("notification after the release of a key waited for: payload %q, want %q", p, waited)
	}
	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	// From now on every release of the key is announced, waiter or not.
	if err := r.l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if p := next(10 * time.Second); p != waited {
		t.Fatalf("notification after a later release: payload %q, want %q", p, waited)
	}
}

// TestAcquire_oneClientManyGoroutines contends on one key from many
// goroutines of one client: holdings must never overlap, tokens must
// increase, and TryAcquire of a free key by many goroutines at once must
// grant it exactly once.
func TestAcquire_oneClientManyGoroutines(t *testing.T) {
	dsn := server(t)
	c := open(t, drivertest.WithParams(dsn, "distlock_table", freshTable(t, dsn), "pool_max_conns", "8"))
	ctx := drivertest.Context(t, 2*time.Minute)
	key := "many/" + drivertest.RandomHex(4)

	const goroutines = 16
	for round := range 20 {
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			granted []*lock.Lock
			start   = make(chan struct{})
		)
		for range goroutines {
			wg.Go(func() {
				<-start
				l, err := c.TryAcquire(ctx, key)
				switch {
				case err == nil:
					mu.Lock()
					granted = append(granted, l)
					mu.Unlock()
				case !errors.Is(err, lock.ErrNotAcquired):
					t.Errorf("TryAcquire: %v", err)
				}
			})
		}
		close(start)
		wg.Wait()
		if len(granted) != 1 {
			t.Fatalf("round %d: %d of %d simultaneous TryAcquires of a free key succeeded, want 1", round, len(granted), goroutines)
		}
		if err := granted[0].Release(ctx); err != nil {
			t.Fatal(err)
		}
	}

	var h conformance.History
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range 25 {
				l, err := c.Acquire(ctx, key, lock.WithRetry(lock.FixedDelay(time.Minute)))
				if err != nil {
					t.Errorf("Acquire: %v", err)
					return
				}
				h.Hold(l, time.Now())
				if err := l.Release(ctx); err != nil {
					t.Errorf("Release: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := h.Check(true); err != nil {
		t.Fatal(err)
	}
}
