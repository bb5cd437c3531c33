package pgguard_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/distlock/lock/fencing/pgguard"
)

func TestNew_badTableNames(t *testing.T) {
	bad := []string{
		"fences; DROP TABLE users",
		`fen"ces`,
		"1fences",
		"a.b.c",
		".fences",
		"fences.",
		"fen-ces",
		"fences ",
		"fenceś",
		strings.Repeat("f", 64),
		"app." + strings.Repeat("f", 64),
	}
	for _, name := range bad {
		t.Run(name, func(t *testing.T) {
			// A nil pool: the name is refused before any server is asked.
			if g, err := pgguard.New(t.Context(), nil, pgguard.Config{Table: name}); err == nil {
				t.Fatalf("New(%q) = %v, nil; want an error", name, g)
			}
		})
	}
}

func TestNew_goodTableNamesWithoutPool(t *testing.T) {
	for _, name := range []string{"", "fences", "Fences_2", "_f", "app.fences", strings.Repeat("f", 63) + "." + strings.Repeat("g", 63)} {
		if _, err := pgguard.New(t.Context(), nil, pgguard.Config{Table: name}); err != nil {
			t.Errorf("New(nil pool, %q): %v", name, err)
		}
	}
}

func TestNew_noCreateOnMissingTable(t *testing.T) {
	pool := newPool(t)
	table := freshName(t, pool)
	_, err := pgguard.New(t.Context(), pool, pgguard.Config{Table: table, NoCreate: true})
	if err == nil || !strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), "NoCreate") {
		t.Fatalf("New(NoCreate) on a missing table: %v; want an error saying it does not exist and NoCreate is set", err)
	}
	var exists bool
	if err := pool.QueryRow(t.Context(), "SELECT to_regclass($1) IS NOT NULL", table).Scan(&exists); err != nil || exists {
		t.Fatalf("table exists = %v (%v) after New(NoCreate); want it left uncreated", exists, err)
	}
}

func TestNew_noCreateOnExistingTable(t *testing.T) {
	pool := newPool(t)
	g, table := newGuard(t, pool)
	admitAndCommit(t, pool, g, "r", 3)
	g2, err := pgguard.New(t.Context(), pool, pgguard.Config{Table: table, NoCreate: true})
	if err != nil {
		t.Fatalf("New(NoCreate) on an existing table: %v", err)
	}
	tx := begin(t, pool)
	wantStale(t, g2.Admit(t.Context(), tx, "r", 2), "r", 2, 3)
}

// Creators racing each other on one table all succeed, and share the
// table.
func TestNew_concurrentCreators(t *testing.T) {
	pool := newPool(t)
	table := freshName(t, pool)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = pgguard.New(t.Context(), pool, pgguard.Config{Table: table})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("New #%d: %v", i, err)
		}
	}
}

func TestNew_schemaQualifiedTable(t *testing.T) {
	pool := newPool(t)
	schema := freshName(t, pool)
	if _, err := pool.Exec(t.Context(), "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := pool.Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	g, err := pgguard.New(t.Context(), pool, pgguard.Config{Table: schema + ".Fences"})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	admitAndCommit(t, pool, g, "r", 1)
	var n int
	if err := pool.QueryRow(t.Context(), "SELECT count(*) FROM "+pgx.Identifier{schema, "Fences"}.Sanitize()).Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows in %s.\"Fences\" = %d (%v), want 1", schema, n, err)
	}
}
