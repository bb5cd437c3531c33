package sqlguard_test

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"testing"

	"github.com/distlock/lock/fencing/sqlguard"
)

func TestNew_noDialect(t *testing.T) {
	for _, d := range []sqlguard.Dialect{0, 99} {
		if g, err := sqlguard.New(t.Context(), nil, sqlguard.Config{Dialect: d}); err == nil || !strings.Contains(err.Error(), "Dialect") {
			t.Errorf("New(Dialect %d) = %v, %v; want an error about Config.Dialect", d, g, err)
		}
	}
}

// A dialect that is not the database's fails at New, loudly, before any
// admission.
func TestNew_wrongDialect(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		db := b.open(t)
		other := sqlguard.PostgreSQL
		if b.dialect == sqlguard.PostgreSQL {
			other = sqlguard.MySQL
		}
		table := freshName(t, b, db)
		if _, err := sqlguard.New(t.Context(), db, sqlguard.Config{Dialect: other, Table: table}); err == nil {
			t.Fatalf("New(%v) on a %s database succeeded, want an error", other, b.name)
		}
	})
}

func TestNew_badTableNames(t *testing.T) {
	bad := []string{
		"fences; DROP TABLE users",
		`fen"ces`,
		"fen`ces",
		"1fences",
		"a.b.c",
		".fences",
		"fences.",
		"fen-ces",
		"fences ",
		"fenceś",
		strings.Repeat("f", 65),
		"app." + strings.Repeat("f", 65),
	}
	for _, d := range []sqlguard.Dialect{sqlguard.MySQL, sqlguard.PostgreSQL} {
		for _, name := range bad {
			t.Run(d.String()+"/"+name, func(t *testing.T) {
				// A nil db: the name is refused before any server is asked.
				if g, err := sqlguard.New(t.Context(), nil, sqlguard.Config{Dialect: d, Table: name}); err == nil {
					t.Fatalf("New(%q) = %v, nil; want an error", name, g)
				}
			})
		}
	}
	// 64 bytes a part: MySQL keeps them whole, PostgreSQL would cut them.
	long := strings.Repeat("f", 64)
	if _, err := sqlguard.New(t.Context(), nil, sqlguard.Config{Dialect: sqlguard.PostgreSQL, Table: long}); err == nil {
		t.Errorf("New(PostgreSQL, %d bytes) succeeded, want an error", len(long))
	}
	if _, err := sqlguard.New(t.Context(), nil, sqlguard.Config{Dialect: sqlguard.MySQL, Table: long + "." + long}); err != nil {
		t.Errorf("New(MySQL, %d bytes a part): %v", len(long), err)
	}
}

func TestNew_goodTableNamesWithoutDB(t *testing.T) {
	for _, d := range []sqlguard.Dialect{sqlguard.MySQL, sqlguard.PostgreSQL} {
		for _, name := range []string{"", "fences", "Fences_2", "_f", "app.fences", strings.Repeat("f", 63) + "." + strings.Repeat("g", 63)} {
			if _, err := sqlguard.New(t.Context(), nil, sqlguard.Config{Dialect: d, Table: name}); err != nil {
				t.Errorf("New(%v, nil db, %q): %v", d, name, err)
			}
		}
	}
}

func TestNew_noCreateOnMissingTable(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		db := b.open(t)
		table := freshName(t, b, db)
		_, err := sqlguard.New(t.Context(), db, sqlguard.Config{Dialect: b.dialect, Table: table, NoCreate: true})
		if err == nil || !strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), "NoCreate") {
			t.Fatalf("New(NoCreate) on a missing table: %v; want an error saying it does not exist and NoCreate is set", err)
		}
		if _, err := db.ExecContext(t.Context(), "SELECT 1 FROM "+b.quote(table)); err == nil {
			t.Fatal("the table exists after New(NoCreate); want it left uncreated")
		}
	})
}

func TestNew_noCreateOnExistingTable(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		db := b.open(t)
		g, table := newGuard(t, b, db)
		admitAndCommit(t, db, g, "r", 3)
		g2, err := sqlguard.New(t.Context(), db, sqlguard.Config{Dialect: b.dialect, Table: table, NoCreate: true})
		if err != nil {
			t.Fatalf("New(NoCreate) on an existing table: %v", err)
		}
		tx := begin(t, db, nil)
		wantStale(t, g2.Admit(t.Context(), tx, "r", 2), "r", 2, 3)
	})
}

// On MySQL a table of an engine without transactions or row locks would
// let a stale write through: New refuses it.
func TestNew_mysqlRefusesOtherEngines(t *testing.T) {
	b := &mysqlBackend
	db := b.open(t)
	for _, engine := range []string{"MyISAM", "MEMORY"} {
		t.Run(engine, func(t *testing.T) {
			table := freshName(t, b, db)
			if _, err := db.ExecContext(t.Context(), "CREATE TABLE "+b.quote(table)+" (resource VARBINARY(255) NOT NULL PRIMARY KEY, token BIGINT NOT NULL) ENGINE="+engine); err != nil {
				t.Fatal(err)
			}
			for _, noCreate := range []bool{false, true} {
				_, err := sqlguard.New(t.Context(), db, sqlguard.Config{Dialect: b.dialect, Table: table, NoCreate: noCreate})
				if err == nil || !strings.Contains(err.Error(), "InnoDB") {
					t.Fatalf("New(NoCreate: %v) on a %s table: %v; want an error naming InnoDB", noCreate, engine, err)
				}
			}
		})
	}
}

// Creators racing each other on one table all succeed, and share the
// table.
func TestNew_concurrentCreators(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		db := b.open(t)
		table := freshName(t, b, db)
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = sqlguard.New(t.Context(), db, sqlguard.Config{Dialect: b.dialect, Table: table})
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("New #%d: %v", i, err)
			}
		}
	})
}

// A table in another schema (a database, on MySQL) is created there.
func TestNew_schemaQualifiedTable(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		db := b.open(t)
		schema := b.scratchSchema(t, db)
		table := freshName(t, b, db)
		t.Cleanup(func() {
			if _, err := db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+b.quote(schema)+"."+b.quote(table)); err != nil {
				t.Errorf("dropping table %s.%s: %v", schema, table, err)
			}
		})
		g, err := sqlguard.New(t.Context(), db, sqlguard.Config{Dialect: b.dialect, Table: schema + "." + table})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		admitAndCommit(t, db, g, "r", 1)
		var n int
		if err := db.QueryRowContext(t.Context(), "SELECT count(*) FROM "+b.quote(schema)+"."+b.quote(table)).Scan(&n); err != nil || n != 1 {
			t.Fatalf("rows in %s.%s = %d (%v), want 1", schema, table, n, err)
		}
		if _, err := db.ExecContext(t.Context(), "SELECT 1 FROM "+b.quote(table)); err == nil {
			t.Fatalf("a table %s exists outside schema %s", table, schema)
		}
	})
}

// scratchSchema returns a schema the test may create tables in, dropped
// when the test ends. On MySQL it is the database distlock_scratch, which
// the test account owns but cannot create; on PostgreSQL a fresh schema.
func (b *backend) scratchSchema(t *testing.T, db *sql.DB) string {
	t.Helper()
	if b.dialect == sqlguard.MySQL {
		return "distlock_scratch"
	}
	schema := freshName(t, b, db)
	if _, err := db.ExecContext(t.Context(), "CREATE SCHEMA "+b.quote(schema)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := db.ExecContext(context.Background(), "DROP SCHEMA "+b.quote(schema)+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	return schema
}
