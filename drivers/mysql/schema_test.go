package mysql_test

import (
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivertest"
)

// oldTable makes a lease table by the schema of before values grew to
// driver.MaxValueLen characters, whose value column held 64 bytes, and
// returns its name. The table is dropped when the test ends.
func oldTable(t *testing.T, db *sql.DB, dsn string) string {
	t.Helper()
	name := freshTable(t, dsn)
	_, err := db.ExecContext(t.Context(), "CREATE TABLE `"+name+"` (\n"+
		"`lock_key`   VARBINARY(512)  NOT NULL PRIMARY KEY,\n"+
		"`value`      VARBINARY(64)   NOT NULL,\n"+
		"`fence`      BIGINT UNSIGNED NOT NULL,\n"+
		"`expires_at` DATETIME(6)     NOT NULL\n"+
		") ENGINE = InnoDB")
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// valueWidth returns the width of table's value column, in bytes.
func valueWidth(t *testing.T, db *sql.DB, table string) int {
	t.Helper()
	var n int
	err := db.QueryRowContext(t.Context(), "SELECT `CHARACTER_MAXIMUM_LENGTH` FROM information_schema.`COLUMNS` "+
		"WHERE `TABLE_SCHEMA` = DATABASE() AND `TABLE_NAME` = ? AND `COLUMN_NAME` = 'value'", table).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A value of driver.MaxValueLen characters.
var longValue = strings.Repeat("v", driver.MaxValueLen)

// A table the driver creates holds values of driver.MaxValueLen
// characters, and one character more does not fit: the column is as wide
// as the contract, no wider.
func TestCreate_valueColumnWidth(t *testing.T) {
	dsn := server(t)
	db := admin(t, dsn)
	name := freshTable(t, dsn)
	connect(t, drivertest.WithParams(dsn, "distlock_table", name))
	if got := valueWidth(t, db, name); got != driver.MaxValueLen {
		t.Errorf("the value column holds %d bytes, want driver.MaxValueLen (%d)", got, driver.MaxValueLen)
	}
}

// A table of the old schema is widened when the driver connects, if it
// may create the table: the longest value is then kept whole.
func TestOldTable_widened(t *testing.T) {
	dsn := server(t)
	db := admin(t, dsn)
	name := oldTable(t, db, dsn)
	c := connect(t, drivertest.WithParams(dsn, "distlock_table", name))
	if got := valueWidth(t, db, name); got != driver.MaxValueLen {
		t.Errorf("after Connect, the value column holds %d bytes, want %d", got, driver.MaxValueLen)
	}
	ctx := t.Context()
	if _, err := c.Acquire(ctx, "k", longValue, time.Minute); err != nil {
		t.Fatalf("Acquire with a value of %d characters: %v", len(longValue), err)
	}
	h, held, err := c.(driver.Inspector).Inspect(ctx, "k")
	if err != nil || !held || h.Value != longValue {
		t.Errorf("Inspect = %q, %v, %v; want the value whole", h.Value, held, err)
	}
	if err := c.Release(ctx, "k", longValue); err != nil {
		t.Errorf("Release: %v", err)
	}
}

// A table of the old schema that the driver may not alter
// (distlock_create_table=false) keeps its width. Values that fit work; a
// longer one fails at once with an error matching ErrMisconfigured that
// says what to run, even in a non-strict sql_mode, where the server would
// cut the value and report success.
func TestOldTable_noCreate_refusesLongValues(t *testing.T) {
	dsn := server(t)
	db := admin(t, dsn)
	name := oldTable(t, db, dsn)
	full := drivertest.WithParams(dsn, "distlock_table", name, "distlock_create_table", "false", "sql_mode", "''")
	c := connect(t, full)
	if got := valueWidth(t, db, name); got != 64 {
		t.Errorf("the value column holds %d bytes, want 64: the driver was told not to alter it", got)
	}
	ctx := t.Context()
	fits := longValue[:64]
	if _, err := c.Acquire(ctx, "k", fits, time.Minute); err != nil {
		t.Fatalf("Acquire with a value that fits: %v", err)
	}
	if err := c.Release(ctx, "k", fits); err != nil {
		t.Errorf("Release of a value that fits: %v", err)
	}
	_, err := c.Acquire(ctx, "k", fits+"x", time.Minute)
	if !errors.Is(err, driver.ErrMisconfigured) || !strings.Contains(err.Error(), "ALTER TABLE `"+name+"` MODIFY `value` VARBINARY(192) NOT NULL") {
		t.Errorf("Acquire with a value of 65 characters = %v, want an error matching ErrMisconfigured that says to run the ALTER TABLE", err)
	}
	if _, held, err := c.(driver.Inspector).Inspect(ctx, "k"); err != nil || held {
		t.Errorf("Inspect after the refused Acquire = %v, %v; want the key free (nothing written)", held, err)
	}

	// Through the portable API: a campaign with a long leader value ends
	// at once, rather than waiting on a failure that retrying cannot fix.
	e, err := open(t, full).Election("jobs")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := e.Campaign(ctx, strings.Repeat("x", lock.MaxLeaderValue)); !errors.Is(err, lock.ErrMisconfigured) {
		t.Errorf("Campaign with a long leader value = %v, want an error matching ErrMisconfigured", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Campaign took %v to fail: it retried", d)
	}
	term, err := e.Campaign(ctx, "a")
	if err != nil {
		t.Fatalf("Campaign with a short leader value: %v", err)
	}
	if err := term.Resign(ctx); err != nil {
		t.Errorf("Resign: %v", err)
	}
}

// A table of the old schema whose metadata lock another session holds is
// not widened: the ALTER gives up within its lock wait, so that it never
// holds up the table's statements for long, and the driver refuses the
// values that do not fit, saying why.
func TestOldTable_widenBlocked_refusesLongValues(t *testing.T) {
	dsn := server(t)
	db := admin(t, dsn)
	name := oldTable(t, db, dsn)
	// An open transaction that read the table holds its metadata lock
	// until it ends.
	tx, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM `"+name+"`").Scan(&n); err != nil {
		t.Fatal(err)
	}
	c := connect(t, drivertest.WithParams(dsn, "distlock_table", name))
	tx.Rollback()
	if got := valueWidth(t, db, name); got != 64 {
		t.Errorf("the value column holds %d bytes, want 64: its table was in use", got)
	}
	_, err = c.Acquire(t.Context(), "k", longValue, time.Minute)
	if !errors.Is(err, driver.ErrMisconfigured) || !strings.Contains(err.Error(), "widening it failed") {
		t.Errorf("Acquire with a long value = %v, want an error matching ErrMisconfigured that says the widening failed", err)
	}
	if _, err := c.Acquire(t.Context(), "k", longValue[:64], time.Minute); err != nil {
		t.Errorf("Acquire with a value that fits: %v", err)
	}
}
