package sqlguard

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
)

// Dialect is the SQL dialect of a guard's database, named in [Config].
// The zero Dialect names none, and [New] refuses it.
type Dialect int

const (
	// MySQL is MySQL 8.0 and later, and MariaDB 10.6 and later, through
	// github.com/go-sql-driver/mysql. The tests run on MariaDB 10.11; the
	// statements are ones that MySQL 8 accepts too.
	MySQL Dialect = iota + 1

	// PostgreSQL is PostgreSQL, through github.com/jackc/pgx/v5/stdlib.
	PostgreSQL
)

// String returns the dialect's name.
func (d Dialect) String() string {
	if x, ok := dialects[d]; ok {
		return x.name
	}
	return "Dialect(" + strconv.Itoa(int(d)) + ")"
}

// querier is what an admission needs of a transaction.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// dialect is how a guard speaks to one kind of server: how it quotes a
// table's name, creates and finds the table, and admits a token.
type dialect struct {
	name     string
	maxIdent int // the longest identifier the server keeps whole, in bytes

	quote  func(part string) string
	create func(ident string) string
	admit  func(ident string) string

	// exists reports whether the table named by schema ("" for the
	// connection's own) and name exists, and refuses a table where a
	// guard would be unsafe.
	exists func(ctx context.Context, db *sql.DB, schema, name string) (bool, error)

	// run runs the admit statement for resource and token, and returns the
	// fence as the statement left it.
	run func(ctx context.Context, q querier, stmt, resource string, token int64) (newest int64, err error)
}

// dialects is the dialect table: what each [Dialect] value means.
var dialects = map[Dialect]*dialect{
	MySQL:      &mysqlDialect,
	PostgreSQL: &postgresDialect,
}

// mysqlDialect is MySQL's and MariaDB's. MySQL has no RETURNING, so the
// admit statement hands the fence back through LAST_INSERT_ID(expr). The
// server returns that value with the statement's result, on the insert of
// a new row and on the update of an existing one alike. GREATEST leaves a
// higher fence as it was, so the token was admitted if the fence equals it.
// The row counts of ON DUPLICATE KEY UPDATE, which the connection's
// clientFoundRows flag changes, are never read. The token is bound twice.
// VALUES(), which MySQL 8.0.20 deprecated, and a row alias, which MariaDB
// lacks, are not needed. DESIGN.md says why this is safe.
var mysqlDialect = dialect{
	name:     "MySQL",
	maxIdent: 64,
	quote:    func(part string) string { return "`" + part + "`" },
	create: func(ident string) string {
		return `CREATE TABLE IF NOT EXISTS ` + ident + ` (
	resource VARBINARY(` + strconv.Itoa(MaxResourceLen) + `) NOT NULL PRIMARY KEY,
	token    BIGINT NOT NULL CHECK (token > 0)
) ENGINE=InnoDB`
	},
	admit: func(ident string) string {
		return `INSERT INTO ` + ident + ` (resource, token) VALUES (?, LAST_INSERT_ID(?))
ON DUPLICATE KEY UPDATE token = LAST_INSERT_ID(GREATEST(token, ?))`
	},
	exists: mysqlExists,
	run: func(ctx context.Context, q querier, stmt, resource string, token int64) (int64, error) {
		res, err := q.ExecContext(ctx, stmt, resource, token, token)
		if err != nil {
			return 0, err
		}
		newest, err := res.LastInsertId()
		if err == nil && newest <= 0 {
			err = errors.New("the server returned no fence: LAST_INSERT_ID is " + strconv.FormatInt(newest, 10))
		}
		return newest, err
	},
}

// mysqlExists finds the table in information_schema. Only an InnoDB table
// does: other engines (MyISAM, MEMORY, Aria) have no transactions or no row
// locks, so the admission would not commit with the write.
func mysqlExists(ctx context.Context, db *sql.DB, schema, name string) (bool, error) {
	var engine sql.NullString
	err := db.QueryRowContext(ctx, `SELECT engine FROM information_schema.tables
WHERE table_schema = COALESCE(NULLIF(?, ''), DATABASE()) AND table_name = ?`, schema, name).Scan(&engine)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, err
	case engine.String != "InnoDB":
		return false, errors.New("its engine is " + strconv.Quote(engine.String) + ", not InnoDB: the guard needs InnoDB's transactions and row locks")
	}
	return true, nil
}

func postgresQuote(part string) string { return `"` + part + `"` }

// postgresDialect is PostgreSQL's: the statement of fencing/pgguard, where
// RETURNING hands the fence back.
var postgresDialect = dialect{
	name:     "PostgreSQL",
	maxIdent: 63,
	quote:    postgresQuote,
	create: func(ident string) string {
		return `CREATE TABLE IF NOT EXISTS ` + ident + ` (
	resource text COLLATE "C" PRIMARY KEY,
	token    bigint NOT NULL CHECK (token > 0)
)`
	},
	admit: func(ident string) string {
		return `INSERT INTO ` + ident + ` AS f (resource, token) VALUES ($1, $2)
ON CONFLICT (resource) DO UPDATE SET token = GREATEST(f.token, EXCLUDED.token)
RETURNING token`
	},
	exists: func(ctx context.Context, db *sql.DB, schema, name string) (bool, error) {
		ident := postgresQuote(name)
		if schema != "" {
			ident = postgresQuote(schema) + "." + ident
		}
		var exists bool
		err := db.QueryRowContext(ctx, `SELECT to_regclass($1) IS NOT NULL`, ident).Scan(&exists)
		return exists, err
	},
	run: func(ctx context.Context, q querier, stmt, resource string, token int64) (int64, error) {
		var newest int64
		err := q.QueryRowContext(ctx, stmt, resource, token).Scan(&newest)
		return newest, err
	},
}
