package pgguard_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/distlock/lock/fencing"
	"github.com/distlock/lock/fencing/pgguard"
	"github.com/distlock/lock/internal/testenv"
)

// newPool returns a pool on the test database, closed when the test ends,
// skipping the test without a server.
func newPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(testenv.PostgresDSN(t))
	if err != nil {
		t.Fatalf("parsing DISTLOCK_POSTGRES_DSN: %v", err)
	}
	cfg.MaxConns = 8
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatalf("pgxpool: %v", err)
	}
	t.Cleanup(func() {
		// Close waits for every connection to come back: one that a
		// transaction left acquired would hang the test.
		closed := make(chan struct{})
		go func() { pool.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Errorf("pool.Close still waits after 10s: %d connections were never released", pool.Stat().AcquiredConns())
		}
	})
	return pool
}

// freshName returns a table name no other test uses, and drops the tables
// named after it (the name itself, and the name with a suffix) when the
// test ends.
func freshName(t testing.TB, pool *pgxpool.Pool, suffixes ...string) string {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	name := "distlock_test_fences_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, s := range append([]string{""}, suffixes...) {
			if _, err := pool.Exec(ctx, "DROP TABLE IF EXISTS "+pgx.Identifier{name + s}.Sanitize()); err != nil {
				t.Errorf("dropping table %s: %v", name+s, err)
			}
		}
	})
	return name
}

// newGuard returns a guard on a fresh table, and its name.
func newGuard(t testing.TB, pool *pgxpool.Pool, suffixes ...string) (*pgguard.Guard, string) {
	t.Helper()
	table := freshName(t, pool, suffixes...)
	g, err := pgguard.New(t.Context(), pool, pgguard.Config{Table: table})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return g, table
}

// begin begins a transaction, rolled back when the test ends unless it
// ended before.
func begin(t testing.TB, pool *pgxpool.Pool) pgx.Tx {
	t.Helper()
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	t.Cleanup(func() { tx.Rollback(context.Background()) })
	return tx
}

// admitAndCommit admits token for resource in a transaction of its own.
func admitAndCommit(t testing.TB, pool *pgxpool.Pool, g *pgguard.Guard, resource string, token fencing.Token) {
	t.Helper()
	tx := begin(t, pool)
	if err := g.Admit(t.Context(), tx, resource, token); err != nil {
		t.Fatalf("Admit(%d): %v", token, err)
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

// newest returns the token stored for resource, 0 if there is no row.
func newest(t testing.TB, pool *pgxpool.Pool, table, resource string) fencing.Token {
	t.Helper()
	var tok int64
	err := pool.QueryRow(t.Context(), "SELECT token FROM "+pgx.Identifier{table}.Sanitize()+" WHERE resource = $1", resource).Scan(&tok)
	if err == pgx.ErrNoRows {
		return 0
	}
	if err != nil {
		t.Fatalf("reading the fence of %q: %v", resource, err)
	}
	return fencing.Token(tok)
}

// wantStale fails the test unless err is a *fencing.StaleError for
// resource and token, matching fencing.ErrStale, naming newest.
func wantStale(t testing.TB, err error, resource string, token, newest fencing.Token) {
	t.Helper()
	var se *fencing.StaleError
	if !errors.As(err, &se) || !errors.Is(err, fencing.ErrStale) {
		t.Fatalf("err = %v, want a *fencing.StaleError matching fencing.ErrStale", err)
	}
	if *se != (fencing.StaleError{Resource: resource, Token: token, Newest: newest}) {
		t.Fatalf("StaleError = %+v, want {%q %d %d}", *se, resource, token, newest)
	}
}
