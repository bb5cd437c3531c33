package pgguard_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/distlock/lock/fencing"
	"github.com/distlock/lock/fencing/pgguard"
)

// newValueTable creates table+"_data", a single int value per resource,
// which the tests' writes set.
func newValueTable(t *testing.T, pool *pgxpool.Pool, table string) string {
	t.Helper()
	data := pgx.Identifier{table + "_data"}.Sanitize()
	if _, err := pool.Exec(t.Context(), "CREATE TABLE "+data+" (resource text PRIMARY KEY, value bigint NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	return data
}

// setValue is a protected write: it sets resource's value in the
// transaction of the guard's Do.
func setValue(data, resource string, value int64) func(context.Context) error {
	return func(ctx context.Context) error {
		_, err := pgguard.Tx(ctx).Exec(ctx, "INSERT INTO "+data+" VALUES ($1, $2) ON CONFLICT (resource) DO UPDATE SET value = EXCLUDED.value", resource, value)
		return err
	}
}

func value(t *testing.T, pool *pgxpool.Pool, data, resource string) int64 {
	t.Helper()
	var v int64
	err := pool.QueryRow(t.Context(), "SELECT value FROM "+data+" WHERE resource = $1", resource).Scan(&v)
	if err != nil && err != pgx.ErrNoRows {
		t.Fatal(err)
	}
	return v
}

func TestDo_writesAndCommits(t *testing.T) {
	pool := newPool(t)
	g, table := newGuard(t, pool, "_data")
	data := newValueTable(t, pool, table)
	if err := g.Do(t.Context(), "r", 4, setValue(data, "r", 40)); err != nil {
		t.Fatal(err)
	}
	if v, tok := value(t, pool, data, "r"), newest(t, pool, table, "r"); v != 40 || tok != 4 {
		t.Fatalf("value, fence = %d, %d; want 40, 4", v, tok)
	}
}

func TestDo_staleTokenSkipsTheWrite(t *testing.T) {
	pool := newPool(t)
	g, table := newGuard(t, pool, "_data")
	data := newValueTable(t, pool, table)
	if err := g.Do(t.Context(), "r", 4, setValue(data, "r", 40)); err != nil {
		t.Fatal(err)
	}
	called := false
	err := g.Do(t.Context(), "r", 3, func(ctx context.Context) error { called = true; return nil })
	wantStale(t, err, "r", 3, 4)
	if called {
		t.Fatal("Do called write with a stale token")
	}
}

// A write's error is returned as it is, and rolls back both the write and
// the admission.
func TestDo_writeErrorRollsBack(t *testing.T) {
	pool := newPool(t)
	g, table := newGuard(t, pool, "_data")
	data := newValueTable(t, pool, table)
	if err := g.Do(t.Context(), "r", 4, setValue(data, "r", 40)); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := g.Do(t.Context(), "r", 9, func(ctx context.Context) error {
		if err := setValue(data, "r", 90)(ctx); err != nil {
			return err
		}
		return boom
	})
	if err != boom {
		t.Fatalf("Do = %v, want write's error as it is", err)
	}
	if v, tok := value(t, pool, data, "r"), newest(t, pool, table, "r"); v != 40 || tok != 4 {
		t.Fatalf("value, fence = %d, %d after a failed write; want 40, 4", v, tok)
	}
	if err := g.Do(t.Context(), "r", 5, setValue(data, "r", 50)); err != nil {
		t.Fatalf("Do(5) after the failed Do(9): %v", err)
	}
}

// A write that panics leaves nothing behind, and no connection stuck in
// its transaction.
func TestDo_writePanicRollsBack(t *testing.T) {
	pool := newPool(t)
	g, table := newGuard(t, pool)
	func() {
		defer func() { recover() }()
		g.Do(t.Context(), "r", 9, func(context.Context) error { panic("boom") })
	}()
	if got := newest(t, pool, table, "r"); got != 0 {
		t.Fatalf("fence = %d after a panicking write, want no row", got)
	}
	if n := pool.Stat().AcquiredConns(); n != 0 {
		t.Fatalf("%d connections still acquired after a panicking write", n)
	}
}

// A failed commit is reported, and nothing is written.
func TestDo_commitFailure(t *testing.T) {
	pool := newPool(t)
	g, table := newGuard(t, pool)
	err := g.Do(t.Context(), "r", 2, func(ctx context.Context) error {
		// A deferred constraint that fails at commit.
		tx := pgguard.Tx(ctx)
		if _, err := tx.Exec(ctx, "CREATE TEMP TABLE c (x int UNIQUE DEFERRABLE INITIALLY DEFERRED) ON COMMIT DROP"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "INSERT INTO c VALUES (1), (1)")
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "committing") {
		t.Fatalf("Do = %v, want a commit failure", err)
	}
	if got := newest(t, pool, table, "r"); got != 0 {
		t.Fatalf("fence = %d after a failed commit, want no row", got)
	}
}

func TestDo_zeroToken(t *testing.T) {
	pool := newPool(t)
	g, _ := newGuard(t, pool)
	called := false
	err := g.Do(t.Context(), "r", 0, func(context.Context) error { called = true; return nil })
	if !errors.Is(err, fencing.ErrNoToken) || called {
		t.Fatalf("Do(0) = %v, write called: %v; want an error matching fencing.ErrNoToken, and no call", err, called)
	}
}

func TestDo_withoutPool(t *testing.T) {
	g, err := pgguard.New(t.Context(), nil, pgguard.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Do(t.Context(), "r", 1, nil); err == nil || !strings.Contains(err.Error(), "pool") {
		t.Fatalf("Do on a guard without a pool: %v; want an error about the pool", err)
	}
}

func TestTx_outsideDo(t *testing.T) {
	if tx := pgguard.Tx(t.Context()); tx != nil {
		t.Fatalf("Tx of a plain context = %v, want nil", tx)
	}
}
