package mysql

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/distlock/lock/driver"
)

// DefaultTable is the lease table's name when the DSN or [Config] names
// none.
const DefaultTable = "distlock_leases"

// tableName is what a lease table's name may be: letters, digits and '_',
// not starting with a digit, at most 64 bytes (MySQL's limit).
var tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// table is a validated lease table name and the statements that use it.
// The name is spliced into SQL text only after validation, and then
// quoted. Keys, values and TTLs only ever travel as bind parameters.
type table struct {
	name  string // as configured
	ident string // quoted with backticks

	acquire, extend, release, transfer, inspect, poll, create, widen string

	// scratch is nil if Drop may drop the table, and otherwise why not
	// (see scratchTable).
	scratch error
}

// ErrNotScratch is Drop's error for a table that is not a scratch table
// of its own: the default table, or one the driver was told not to
// create. It matches driver.ErrMisconfigured.
var ErrNotScratch = fmt.Errorf("%w: not a scratch table", driver.ErrMisconfigured)

// scratchTable returns nil if the table of cfg is one Drop may drop, and
// otherwise why not. The default table is shared by every program that
// names none, and a table the driver may not create belongs to the
// database's owner.
func scratchTable(name string, cfg Config) error {
	switch {
	case name == DefaultTable:
		return fmt.Errorf("%w: %s is the default table; name a table of its own with distlock_table", ErrNotScratch, name)
	case cfg.NoCreate:
		return fmt.Errorf("%w: table %s is not the driver's to create (distlock_create_table=false), so not its to drop", ErrNotScratch, name)
	}
	return nil
}

// pollBatch is how many keys one poll statement asks about. A poll of
// fewer keys repeats the last one, so that one prepared statement serves.
const pollBatch = 16

// newTable validates name ("" means DefaultTable) and writes the
// statements on the table it names. The statements are one set that
// MariaDB 10.6+ and MySQL 8.0+ both accept: no RETURNING, and no row
// counts that depend on the connection's clientFoundRows flag. A grant
// reports its fence through LAST_INSERT_ID(expr), which the server sends
// back in the statement's OK packet. See DESIGN.md.
func newTable(name string) (*table, error) {
	if name == "" {
		name = DefaultTable
	}
	if !tableName.MatchString(name) {
		if len(name) > 64 {
			return nil, fmt.Errorf("table name is %d bytes long, over the maximum of 64", len(name))
		}
		return nil, errors.New("table name must be letters, digits and '_', not starting with a digit")
	}
	t := &table{name: name, ident: "`" + name + "`"}
	const (
		now     = "UTC_TIMESTAMP(6)"
		expired = "`expires_at` <= " + now
		live    = "`expires_at` > " + now
		lease   = now + " + INTERVAL ? MICROSECOND"
	)

	// Acquire inserts the key's row, or takes it over if its lease has
	// ended, in one statement under the row lock that ON DUPLICATE KEY
	// UPDATE takes. The fence is raised in the same statement. The
	// assignments are evaluated left to right, each seeing the columns
	// already assigned, so expires_at comes last and every condition sees
	// the old lease. The statement's LAST_INSERT_ID is the new fence on a
	// grant, and 0 on a refusal (the VALUES row has set it to 1 before
	// the duplicate was found, so a refusal must set it back).
	t.acquire = "INSERT INTO " + t.ident + " (`lock_key`, `value`, `fence`, `expires_at`)\n" +
		"VALUES (?, ?, LAST_INSERT_ID(1), " + lease + ")\n" +
		"ON DUPLICATE KEY UPDATE\n" +
		"`fence` = IF(" + expired + ", LAST_INSERT_ID(`fence` + 1), LAST_INSERT_ID(0) + `fence`),\n" +
		"`value` = IF(" + expired + ", ?, `value`),\n" +
		"`expires_at` = IF(" + expired + ", " + lease + ", `expires_at`)"

	// Extend never revives a lease that has ended, even if nobody took the
	// key since. LAST_INSERT_ID(fence) tells a match (a positive fence)
	// from none (0), whatever the row count would say.
	t.extend = "UPDATE " + t.ident + " SET `expires_at` = " + lease + ", `fence` = LAST_INSERT_ID(`fence`)\n" +
		"WHERE `lock_key` = ? AND `value` = ? AND " + live

	// Release ends the lease now and keeps the row, so that the key's
	// fence never goes back. It always changes expires_at, so the row
	// count is 1 on a match with or without clientFoundRows.
	t.release = "UPDATE " + t.ident + " SET `expires_at` = " + now + "\n" +
		"WHERE `lock_key` = ? AND `value` = ? AND " + live

	// Transfer gives a live lease to a new value with the next fence.
	t.transfer = "UPDATE " + t.ident + " SET `value` = ?, `fence` = LAST_INSERT_ID(`fence` + 1), `expires_at` = " + lease + "\n" +
		"WHERE `lock_key` = ? AND `value` = ? AND " + live

	t.inspect = "SELECT `value`, `fence`, TIMESTAMPDIFF(MICROSECOND, " + now + ", `expires_at`) FROM " + t.ident + "\n" +
		"WHERE `lock_key` = ? AND " + live

	// Poll lists which of up to pollBatch keys are held, with the fence
	// of each grant and the microseconds it has left. It reads without
	// locking (a consistent read of the latest committed rows).
	t.poll = "SELECT `lock_key`, `fence`, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), `expires_at`) FROM " + t.ident +
		" WHERE `lock_key` IN (?" + strings.Repeat(", ?", pollBatch-1) + ") AND " + live

	t.create = "CREATE TABLE IF NOT EXISTS " + t.ident + ` (
	` + "`lock_key`" + `   VARBINARY(512)  NOT NULL PRIMARY KEY,
	` + "`value`" + `      ` + valueType + `  NOT NULL,
	` + "`fence`" + `      BIGINT UNSIGNED NOT NULL,
	` + "`expires_at`" + ` DATETIME(6)     NOT NULL
) ENGINE = InnoDB`

	// Widen brings the value column of a table made before values grew
	// to driver.MaxValueLen (it held 64) to the width of today's.
	t.widen = "ALTER TABLE " + t.ident + " MODIFY `value` " + valueType + " NOT NULL"
	return t, nil
}

// valueType is the value column's type: wide enough for every value the
// core hands to a driver.
var valueType = "VARBINARY(" + strconv.Itoa(driver.MaxValueLen) + ")"

// widenLockWait bounds how long widening the value column waits for the
// table's metadata lock. An ALTER that waits for it would hold up every
// later statement on the table, so it gives up soon instead.
const widenLockWait = 2 // seconds

// valueColumn is what the driver found of a table's value column.
type valueColumn struct {
	width  int   // in bytes; 0 if unknown
	narrow error // if not nil, the error for a value over width bytes
}

// check returns the column's error for value if the column cannot hold
// it, and nil otherwise.
func (v valueColumn) check(value string) error {
	if v.narrow != nil && len(value) > v.width {
		return v.narrow
	}
	return nil
}

// ensure checks the session and the table in one round trip, and creates
// the table if it is missing and create is set. The statements commit one
// by one, so a session with autocommit off would hold every row lock it
// took: that is refused. It returns what it found of the value column
// (see column).
func (t *table) ensure(ctx context.Context, db *sql.DB, create bool) (valueColumn, error) {
	var (
		autocommit bool
		database   sql.NullString
		engine     sql.NullString
		width      sql.NullInt64
	)
	err := db.QueryRowContext(ctx, "SELECT @@autocommit, DATABASE(), (SELECT `ENGINE` FROM information_schema.`TABLES` "+
		"WHERE `TABLE_SCHEMA` = DATABASE() AND `TABLE_NAME` = ?), (SELECT `CHARACTER_MAXIMUM_LENGTH` FROM information_schema.`COLUMNS` "+
		"WHERE `TABLE_SCHEMA` = DATABASE() AND `TABLE_NAME` = ? AND `COLUMN_NAME` = 'value')", t.name, t.name).Scan(&autocommit, &database, &engine, &width)
	switch {
	case err != nil:
		return valueColumn{}, err
	case !autocommit:
		return valueColumn{}, fmt.Errorf("%w: the session has autocommit off, and the driver's statements must commit one by one", driver.ErrMisconfigured)
	case !database.Valid:
		return valueColumn{}, fmt.Errorf("%w: the connection has no database: name one in the DSN (user@tcp(host:3306)/dbname)", driver.ErrMisconfigured)
	case engine.Valid && !strings.EqualFold(engine.String, "InnoDB"):
		return valueColumn{}, fmt.Errorf("%w: table %s uses the %s engine; the driver needs InnoDB's row locks and transactions",
			driver.ErrMisconfigured, t.name, engine.String)
	case engine.Valid:
		return t.column(ctx, db, create, width)
	case !create:
		return valueColumn{}, fmt.Errorf("%w: table %s does not exist, and the driver was told not to create it (distlock_create_table=false)",
			driver.ErrMisconfigured, t.name)
	}
	if _, err := db.ExecContext(ctx, t.create); err != nil {
		return valueColumn{}, fmt.Errorf("table %s: %w", t.name, err)
	}
	return valueColumn{}, nil
}

// column judges the value column of an existing table, width bytes wide
// (NULL for a type without a width, which holds any value). A table made
// before values grew to driver.MaxValueLen holds 64. If create is set,
// the driver owns the schema and widens the column. Otherwise, or if that
// fails, values that do not fit are refused at once, with an error that
// says what to run: a non-strict sql_mode would cut them, and the cut
// value would hold a lock that its holder can neither extend nor release.
func (t *table) column(ctx context.Context, db *sql.DB, create bool, width sql.NullInt64) (valueColumn, error) {
	if !width.Valid || width.Int64 >= driver.MaxValueLen {
		return valueColumn{}, nil
	}
	why := "the driver was told not to alter it (distlock_create_table=false)"
	if create {
		err := t.widenColumn(ctx, db)
		if err == nil {
			return valueColumn{}, nil
		}
		if ctx.Err() != nil {
			return valueColumn{}, err
		}
		why = "widening it failed: " + err.Error()
	}
	return valueColumn{
		width: int(width.Int64),
		narrow: fmt.Errorf("%w: table %s's value column holds %d bytes, too few for this value (values reach %d); run %s (%s)",
			driver.ErrMisconfigured, t.name, width.Int64, driver.MaxValueLen, t.widen, why),
	}, nil
}

// widenColumn runs the widen statement on a connection of its own, whose
// lock_wait_timeout it sets to widenLockWait, and which it closes after.
func (t *table) widenColumn(ctx context.Context, db *sql.DB) error {
	cn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	// ErrBadConn makes database/sql close the connection, so that the
	// session's lock_wait_timeout never reaches other statements, on a
	// pool of the caller's say.
	defer cn.Raw(func(any) error { return sqldriver.ErrBadConn })
	if _, err := cn.ExecContext(ctx, "SET SESSION lock_wait_timeout = "+strconv.Itoa(widenLockWait)); err != nil {
		return err
	}
	_, err = cn.ExecContext(ctx, t.widen)
	return err
}
