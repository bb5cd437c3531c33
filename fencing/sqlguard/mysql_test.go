package sqlguard_test

import (
	"testing"
)

// The MySQL statement reads neither the row counts of ON DUPLICATE KEY
// UPDATE, which clientFoundRows changes, nor anything else that a
// connection flag changes: it works the same with each.
func TestAdmit_mysqlConnectionFlags(t *testing.T) {
	b := &mysqlBackend
	for _, params := range []string{"", "clientFoundRows=true", "interpolateParams=true", "clientFoundRows=true&interpolateParams=true"} {
		t.Run(params, func(t *testing.T) {
			var ps []string
			if params != "" {
				ps = append(ps, params)
			}
			db := b.open(t, ps...)
			g, table := newGuard(t, b, db)
			admitAndCommit(t, db, g, "r", 5) // inserts
			admitAndCommit(t, db, g, "r", 5) // changes nothing
			admitAndCommit(t, db, g, "r", 6) // updates
			tx := begin(t, db, nil)
			wantStale(t, g.Admit(t.Context(), tx, "r", 4), "r", 4, 6)
			if got := newest(t, b, db, table, "r"); got != 6 {
				t.Fatalf("fence = %d, want 6", got)
			}
		})
	}
}

// Admit sets the session's LAST_INSERT_ID() to the fence, as documented,
// and leaves the LastInsertId of the caller's own inserts alone.
func TestAdmit_mysqlLastInsertID(t *testing.T) {
	b := &mysqlBackend
	db := b.open(t)
	g, table := newGuard(t, b, db, "_log")
	log := b.quote(table + "_log")
	if _, err := db.ExecContext(t.Context(), "CREATE TABLE "+log+" (id "+b.serial+" PRIMARY KEY, token BIGINT NOT NULL)"+b.engine); err != nil {
		t.Fatal(err)
	}
	tx := begin(t, db, nil)
	insert := func() int64 {
		t.Helper()
		res, err := tx.ExecContext(t.Context(), "INSERT INTO "+log+" (token) VALUES (1)")
		if err != nil {
			t.Fatal(err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	first := insert()
	if err := g.Admit(t.Context(), tx, "r", 42); err != nil {
		t.Fatal(err)
	}
	var last int64
	if err := tx.QueryRowContext(t.Context(), "SELECT LAST_INSERT_ID()").Scan(&last); err != nil || last != 42 {
		t.Fatalf("LAST_INSERT_ID() after Admit(42) = %d (%v), want 42", last, err)
	}
	if second := insert(); second != first+1 {
		t.Fatalf("LastInsertId of an insert after Admit = %d, want %d", second, first+1)
	}
}
