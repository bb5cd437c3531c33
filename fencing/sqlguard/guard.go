package sqlguard

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"github.com/distlock/lock/fencing"
)

// ErrTokenRange is matched by the error of [Guard.Admit] and [Guard.Do]
// for a token above math.MaxInt64, which the table's BIGINT cannot hold.
// No lock of this module issues such a token.
var ErrTokenRange = errors.New("fencing token out of range")

// MaxResourceLen is the longest resource name a guard accepts, in bytes,
// whatever the dialect. It is the length of MySQL's resource column.
const MaxResourceLen = 1024

// Config is a guard's configuration, for [New].
type Config struct {
	// Dialect is the database's SQL dialect, [MySQL] or [PostgreSQL]. It
	// is required: New does not guess it from the driver.
	Dialect Dialect

	// Table is the fence table's name: letters, digits and '_', not
	// starting with a digit, optionally qualified by a schema (a database,
	// on MySQL), at most 63 bytes a part on PostgreSQL and 64 on MySQL. It
	// is used as written, quoted. Empty means [DefaultTable].
	Table string

	// NoCreate leaves the schema alone: New only checks that the table
	// exists, and never creates it.
	NoCreate bool
}

// Guard admits fencing tokens against a fence table in a database/sql
// database. It is safe for concurrent use.
type Guard struct {
	db *sql.DB // for Do; nil for a guard that only admits
	t  *table
}

var _ fencing.Guard = (*Guard)(nil)

// New returns a guard on cfg's table, which it creates if it does not exist
// (or, with cfg.NoCreate, checks that it exists). On MySQL it refuses a
// table whose engine is not InnoDB. The caller keeps db and closes it after
// the guard's last use.
//
// The db may be nil, for a program that only calls [Guard.Admit] with
// transactions of its own. New then validates the configuration and
// contacts no server, so the table must exist already, and [Guard.Do]
// fails.
func New(ctx context.Context, db *sql.DB, cfg Config) (*Guard, error) {
	d, ok := dialects[cfg.Dialect]
	if !ok {
		return nil, fmt.Errorf("sqlguard: Config.Dialect is %v: name the database's, sqlguard.MySQL or sqlguard.PostgreSQL", cfg.Dialect)
	}
	t, err := newTable(d, cfg.Table)
	if err != nil {
		return nil, err
	}
	if db != nil {
		if err := t.ensure(ctx, db, !cfg.NoCreate); err != nil {
			return nil, err
		}
	}
	return &Guard{db: db, t: t}, nil
}

// Admit admits token for resource within tx, in one statement. It returns
// nil if token is no older than the newest token admitted for resource,
// and makes it the newest. Equal tokens are admitted, so a holder may write
// several times under one lock. If token is older, Admit returns a
// [*fencing.StaleError] naming the newest. If token is zero, it returns an
// error matching [fencing.ErrNoToken], and above math.MaxInt64, one
// matching [ErrTokenRange].
//
// The admission is part of tx. It takes effect when tx commits, together
// with the protected writes the caller makes in tx, and is undone if tx
// rolls back. Until then tx holds the resource's row lock, so other
// admissions for resource wait for tx to end. On any error the caller must
// roll tx back and not make its write.
//
// How a waiting admission goes on depends on the server and tx's isolation
// level. On MySQL and MariaDB, at every level, it reads the fence as the
// last committed transaction left it, not as tx's snapshot saw it. The
// exception is MariaDB with innodb_snapshot_isolation on (the default from
// 11.6): there, at REPEATABLE READ, it fails with error 1020 if another
// transaction raised the fence after tx's snapshot. On PostgreSQL at READ
// COMMITTED it reads the last committed fence. At REPEATABLE READ or
// SERIALIZABLE it fails with a serialization failure (SQLSTATE 40001) in
// that case. Either failure is the driver's error, wrapped. The caller
// retries the transaction.
//
// On MySQL, Admit sets the session's LAST_INSERT_ID() to the fence. A
// caller who needs LAST_INSERT_ID() of its own insert in SQL reads it
// before Admit. [sql.Result.LastInsertId] of its own statements is not
// affected.
func (g *Guard) Admit(ctx context.Context, tx *sql.Tx, resource string, token fencing.Token) error {
	if err := check(resource, token); err != nil {
		return err
	}
	newest, err := g.t.d.run(ctx, tx, g.t.admit, resource, int64(token))
	if err != nil {
		return fmt.Errorf("sqlguard: admitting token %s for %q in table %s: %w", token, resource, g.t.name, err)
	}
	if fencing.Token(newest) != token {
		return &fencing.StaleError{Resource: resource, Token: token, Newest: fencing.Token(newest)}
	}
	return nil
}

// check refuses the tokens that no lock issues, and resource names over
// MaxResourceLen.
func check(resource string, token fencing.Token) error {
	switch {
	case token.IsZero():
		return fmt.Errorf("sqlguard: %w for %q", fencing.ErrNoToken, resource)
	case token > math.MaxInt64:
		return fmt.Errorf("sqlguard: %w: token %s for %q is above %d, the largest the fence table's BIGINT holds",
			ErrTokenRange, token, resource, int64(math.MaxInt64))
	case len(resource) > MaxResourceLen:
		return fmt.Errorf("sqlguard: resource %.64q... is %d bytes long, over the maximum of %d", resource, len(resource), MaxResourceLen)
	}
	return nil
}

// Do runs write in a transaction of its own, after admitting token for
// resource in it (see [Guard.Admit]), and commits if write returns nil.
// The transaction has the database's default isolation level. The context
// write gets carries the transaction, and write makes its protected changes
// through [Tx]. Do rolls back on any error: a refused token (then write is
// not called), write's error (which Do returns as it is), or a failed
// commit. Do implements [fencing.Guard]. It fails on a guard made with a
// nil db.
func (g *Guard) Do(ctx context.Context, resource string, token fencing.Token, write func(context.Context) error) error {
	if err := check(resource, token); err != nil {
		return err
	}
	if g.db == nil {
		return errors.New("sqlguard: Do needs a *sql.DB, and the guard was made with none")
	}
	tx, err := g.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlguard: beginning a transaction for %q: %w", resource, err)
	}
	committed := false
	defer func() {
		if !committed { // also when write panics
			// A failed rollback closes the connection, which ends the
			// transaction too: there is nothing to report.
			tx.Rollback()
		}
	}()
	if err := g.Admit(ctx, tx, resource, token); err != nil {
		return err
	}
	if write != nil {
		if err := write(context.WithValue(ctx, txKey{}, tx)); err != nil {
			return err
		}
	}
	committed = true // a failed Commit ends the transaction too
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlguard: committing the write to %q under token %s: %w", resource, token, err)
	}
	return nil
}

type txKey struct{}

// Tx returns the transaction of [Guard.Do] that ctx (a context given to
// Do's write, or derived from one) carries, and nil if it carries none.
func Tx(ctx context.Context) *sql.Tx {
	tx, _ := ctx.Value(txKey{}).(*sql.Tx)
	return tx
}
