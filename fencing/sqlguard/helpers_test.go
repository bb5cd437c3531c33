package sqlguard_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/distlock/lock/fencing"
	"github.com/distlock/lock/fencing/sqlguard"
)

// freshName returns a table name no other test uses, and drops the tables
// named after it (the name itself, and the name with a suffix) when the
// test ends.
func freshName(t testing.TB, b *backend, db *sql.DB, suffixes ...string) string {
	t.Helper()
	r := make([]byte, 6)
	rand.Read(r)
	name := "distlock_test_fences_" + hex.EncodeToString(r)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, s := range append([]string{""}, suffixes...) {
			if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+b.quote(name+s)); err != nil {
				t.Errorf("dropping table %s: %v", name+s, err)
			}
		}
	})
	return name
}

// newGuard returns a guard on a fresh table, and its name.
func newGuard(t testing.TB, b *backend, db *sql.DB, suffixes ...string) (*sqlguard.Guard, string) {
	t.Helper()
	table := freshName(t, b, db, suffixes...)
	g, err := sqlguard.New(t.Context(), db, sqlguard.Config{Dialect: b.dialect, Table: table})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return g, table
}

// begin begins a transaction, rolled back when the test ends unless it
// ended before.
func begin(t testing.TB, db *sql.DB, opts *sql.TxOptions) *sql.Tx {
	t.Helper()
	tx, err := db.BeginTx(t.Context(), opts)
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	t.Cleanup(func() { tx.Rollback() })
	return tx
}

// admitAndCommit admits token for resource in a transaction of its own.
func admitAndCommit(t testing.TB, db *sql.DB, g *sqlguard.Guard, resource string, token fencing.Token) {
	t.Helper()
	tx := begin(t, db, nil)
	if err := g.Admit(t.Context(), tx, resource, token); err != nil {
		t.Fatalf("Admit(%d): %v", token, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

// newest returns the token stored for resource, 0 if there is no row.
func newest(t testing.TB, b *backend, db *sql.DB, table, resource string) fencing.Token {
	t.Helper()
	var tok int64
	err := db.QueryRowContext(t.Context(), b.rebind("SELECT token FROM "+b.quote(table)+" WHERE resource = ?"), resource).Scan(&tok)
	if errors.Is(err, sql.ErrNoRows) {
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

// newValueTable creates table+"_data", a single int value per resource,
// which the tests' writes set.
func newValueTable(t testing.TB, b *backend, db *sql.DB, table string) string {
	t.Helper()
	data := b.quote(table + "_data")
	if _, err := db.ExecContext(t.Context(), "CREATE TABLE "+data+" (resource VARCHAR(200) PRIMARY KEY, value BIGINT NOT NULL)"+b.engine); err != nil {
		t.Fatal(err)
	}
	return data
}

// setValue sets resource's value in tx.
func setValue(ctx context.Context, b *backend, tx *sql.Tx, data, resource string, value int64) error {
	_, err := tx.ExecContext(ctx, b.rebind(fmt.Sprintf(b.upsert, data)), resource, value, value)
	return err
}

// setValueInDo is a protected write: it sets resource's value in the
// transaction of the guard's Do.
func setValueInDo(b *backend, data, resource string, value int64) func(context.Context) error {
	return func(ctx context.Context) error { return setValue(ctx, b, sqlguard.Tx(ctx), data, resource, value) }
}

// value returns resource's value, 0 if it has none.
func value(t testing.TB, b *backend, db *sql.DB, data, resource string) int64 {
	t.Helper()
	var v int64
	err := db.QueryRowContext(t.Context(), b.rebind("SELECT value FROM "+data+" WHERE resource = ?"), resource).Scan(&v)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		t.Fatal(err)
	}
	return v
}
