package sqlguard_test

import (
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"

	"github.com/distlock/lock/drivertest"
	"github.com/distlock/lock/fencing/sqlguard"
)

// backend is a dialect's test server, and the SQL of its own that the
// tests write. Test statements use '?' placeholders, which rebind turns
// into the dialect's.
type backend struct {
	name    string
	dialect sqlguard.Dialect
	driver  string // the database/sql driver's name
	dsnEnv  string // the variable of scripts/services.sh env that gives the DSN

	quote  func(part string) string
	rebind func(query string) string

	serial string // the type of an auto-incrementing id column
	engine string // what follows CREATE TABLE (...)

	// upsert sets a resource's value in a value table (its name spliced in
	// for %s), with the arguments resource, value, value.
	upsert string

	// noCompare is a broken admit statement, which raises the fence to any
	// token, stale or not.
	noCompare func(ident string) string

	// isolation lists how Admit behaves at each isolation level when
	// another transaction raised the fence after the caller's snapshot.
	isolation []isolationCase
}

var mysqlBackend = backend{
	name:    "mysql",
	dialect: sqlguard.MySQL,
	driver:  "mysql",
	dsnEnv:  "DISTLOCK_MYSQL_DSN",
	quote:   func(part string) string { return "`" + part + "`" },
	rebind:  func(query string) string { return query },
	serial:  "BIGINT AUTO_INCREMENT",
	engine:  " ENGINE=InnoDB",
	upsert:  "INSERT INTO %s (resource, value) VALUES (?, ?) ON DUPLICATE KEY UPDATE value = ?",
	noCompare: func(ident string) string {
		return "INSERT INTO " + ident + " (resource, token) VALUES (?, LAST_INSERT_ID(?)) ON DUPLICATE KEY UPDATE token = LAST_INSERT_ID(?)"
	},
	isolation: []isolationCase{
		{name: "readCommitted", level: sql.LevelReadCommitted, snapshot: true},
		{name: "repeatableRead", level: sql.LevelRepeatableRead, snapshot: true},
		// A plain SELECT at SERIALIZABLE takes a shared lock, which would
		// hold the other writer back: this case reads no fence first.
		{name: "serializable", level: sql.LevelSerializable},
		// MariaDB's write-write conflict detection, on by default from 11.6.
		{name: "repeatableReadSnapshotIsolation", level: sql.LevelRepeatableRead, snapshot: true,
			dsnParams: "innodb_snapshot_isolation=ON", needVariable: "innodb_snapshot_isolation",
			conflict: mysqlError(1020)},
	},
}

var postgresBackend = backend{
	name:    "postgres",
	dialect: sqlguard.PostgreSQL,
	driver:  "pgx",
	dsnEnv:  "DISTLOCK_POSTGRES_DSN",
	quote:   func(part string) string { return `"` + part + `"` },
	rebind: func(query string) string {
		var b strings.Builder
		n := 0
		for _, r := range query {
			if r == '?' {
				n++
				b.WriteString("$" + strconv.Itoa(n))
				continue
			}
			b.WriteRune(r)
		}
		return b.String()
	},
	serial: "bigserial",
	upsert: "INSERT INTO %s (resource, value) VALUES (?, ?) ON CONFLICT (resource) DO UPDATE SET value = ?",
	noCompare: func(ident string) string {
		return "INSERT INTO " + ident + " AS f (resource, token) VALUES ($1, $2) ON CONFLICT (resource) DO UPDATE SET token = EXCLUDED.token RETURNING token"
	},
	isolation: []isolationCase{
		{name: "readCommitted", level: sql.LevelReadCommitted, snapshot: true},
		{name: "repeatableRead", level: sql.LevelRepeatableRead, snapshot: true, conflict: serializationFailure},
		{name: "serializable", level: sql.LevelSerializable, snapshot: true, conflict: serializationFailure},
	},
}

var backends = []*backend{&mysqlBackend, &postgresBackend}

// forEachBackend runs f as a subtest for each dialect.
func forEachBackend(t *testing.T, f func(t *testing.T, b *backend)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { f(t, b) })
	}
}

// mysqlError matches a MySQL error of the given number.
func mysqlError(number uint16) func(error) bool {
	return func(err error) bool {
		var me *mysql.MySQLError
		return errors.As(err, &me) && me.Number == number
	}
}

// serializationFailure matches PostgreSQL's SQLSTATE 40001.
func serializationFailure(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "40001"
}

// open returns a database on b's test server, with params added to its
// DSN, closed when the test ends. It skips the test without a server.
func (b *backend) open(t testing.TB, params ...string) *sql.DB {
	t.Helper()
	dsn := drivertest.Lookup(t, b.dsnEnv)
	for _, p := range params {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		dsn += sep + p
	}
	db, err := sql.Open(b.driver, dsn)
	if err != nil {
		t.Fatalf("sql.Open(%q): %v", b.driver, err)
	}
	db.SetMaxOpenConns(8)
	t.Cleanup(func() {
		// A connection still in use was left in a transaction.
		deadline := time.Now().Add(10 * time.Second)
		for db.Stats().InUse > 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := db.Stats().InUse; n > 0 {
			t.Errorf("%d connections still in use when the test ended", n)
		}
		db.Close()
	})
	return db
}
