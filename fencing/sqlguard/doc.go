// Package sqlguard is a fencing guard whose fences live in a table of a
// database/sql database: MySQL 8.0+, MariaDB 10.6+ or PostgreSQL. The
// table holds the newest token admitted for each resource. [Guard.Admit]
// checks and raises it with one statement in the caller's own *sql.Tx, so
// the check and the protected write commit, or roll back, together.
//
//	g, err := sqlguard.New(ctx, db, sqlguard.Config{Dialect: sqlguard.MySQL})
//	...
//	tx, err := db.BeginTx(ctx, nil)
//	if err != nil {
//		return err
//	}
//	defer tx.Rollback() // after Commit, a no-op
//	if err := g.Admit(ctx, tx, "invoice/42", token); err != nil {
//		return err // errors.Is(err, fencing.ErrStale): a newer holder came since
//	}
//	if _, err := tx.ExecContext(ctx, `UPDATE invoices SET paid = 1 WHERE id = 42`); err != nil {
//		return err
//	}
//	return tx.Commit()
//
// Admit locks the resource's row until the transaction ends. So guarded
// writers of one resource run one after the other, and a stale holder's
// write never lands after a newer one's. [Guard.Do] runs a write in a
// transaction of its own, which the write finds with [Tx]. Do makes the
// guard a [fencing.Guard], for [fencing.Middleware].
//
// The [Dialect] is named in [Config], not guessed from db.Driver(). A
// guess would have to know every driver's type by name, and wrappers
// (tracing, pooling, proxies) hide it. A wrong guess runs the other
// server's SQL. The MySQL dialect is tested on MariaDB 10.11 through
// github.com/go-sql-driver/mysql. MySQL 8 is expected to work, and is
// untested here. PostgreSQL is tested through
// github.com/jackc/pgx/v5/stdlib. This package imports neither driver: the
// program imports the one it uses.
//
// The table (default [DefaultTable]) has a row per resource ever admitted,
// keyed by the resource's bytes, compared exactly. It is created as
//
//	MySQL:      resource VARBINARY(1024) PRIMARY KEY, token BIGINT NOT NULL, ENGINE=InnoDB
//	PostgreSQL: resource text COLLATE "C" PRIMARY KEY, token bigint NOT NULL
//
// Tokens above math.MaxInt64 are refused ([ErrTokenRange]). No lock of
// this module issues them. Deleting a row forgets the resource's fence. How
// each dialect's statement stays safe at every isolation level is argued in
// DESIGN.md, beside this file.
package sqlguard
