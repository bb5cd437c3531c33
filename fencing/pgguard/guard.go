package pgguard

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/distlock/lock/fencing"
)

// ErrTokenRange is matched by the error of [Guard.Admit] and [Guard.Do]
// for a token above math.MaxInt64, which the table's bigint cannot hold.
// No lock of this module issues such a token.
var ErrTokenRange = errors.New("fencing token out of range")

// Config is a guard's configuration, for [New]. Its zero value asks for
// the defaults.
type Config struct {
	// Table is the fence table's name: letters, digits and '_', not
	// starting with a digit, optionally qualified by a schema ("fences",
	// "app.fences"), at most 63 bytes a part. It is used as written,
	// quoted. Empty means [DefaultTable].
	Table string

	// NoCreate leaves the schema alone: New only checks that the table
	// exists, and never creates it.
	NoCreate bool
}

// Guard admits fencing tokens against a PostgreSQL fence table. It is safe
// for concurrent use.
type Guard struct {
	pool *pgxpool.Pool // for Do; nil for a guard that only admits
	t    *table
}

var _ fencing.Guard = (*Guard)(nil)

// New returns a guard on cfg's table, which it creates if it does not
// exist (or, with cfg.NoCreate, checks that it exists). The caller keeps
// pool and closes it after the guard's last use.
//
// The pool may be nil, for a program that only calls [Guard.Admit] with
// transactions of its own: New then validates the table's name and
// contacts no server, so the table must have been created already (by a
// New with a pool, or by the program's migrations: see the package
// documentation), and [Guard.Do] fails.
func New(ctx context.Context, pool *pgxpool.Pool, cfg Config) (*Guard, error) {
	t, err := newTable(cfg.Table)
	if err != nil {
		return nil, err
	}
	if pool != nil {
		if err := t.ensure(ctx, pool, !cfg.NoCreate); err != nil {
			return nil, err
		}
	}
	return &Guard{pool: pool, t: t}, nil
}

// Admit admits token for resource within tx: it returns nil if token is no
// older than the newest token admitted for resource, and makes it the
// newest, in one statement. Equal tokens are admitted, so a holder may
// write several times under one lock. If token is older, it returns a
// [*fencing.StaleError] naming the newest; if it is zero, an error
// matching [fencing.ErrNoToken]; above math.MaxInt64, [ErrTokenRange].
//
// The admission is part of tx: it takes effect when tx commits, together
// with the protected writes the caller makes in tx, and is undone if tx
// rolls back. Until then tx holds the resource's row lock, so that other
// admissions for resource wait for tx to end. On any error the caller
// must roll tx back and not make its write.
//
// At READ COMMITTED (PostgreSQL's default) a waiting admission goes on
// once the lock is released. At REPEATABLE READ or SERIALIZABLE, an
// admission fails with a serialization failure (SQLSTATE 40001, in a
// *pgconn.PgError) if another transaction admitted a token for resource
// and committed after tx's snapshot was taken; the caller retries the
// transaction.
func (g *Guard) Admit(ctx context.Context, tx pgx.Tx, resource string, token fencing.Token) error {
	if err := checkToken(resource, token); err != nil {
		return err
	}
	var newest int64
	if err := tx.QueryRow(ctx, g.t.admit, resource, int64(token)).Scan(&newest); err != nil {
		return fmt.Errorf("pgguard: admitting token %s for %q in table %s: %w", token, resource, g.t.name, err)
	}
	if fencing.Token(newest) != token {
		return &fencing.StaleError{Resource: resource, Token: token, Newest: fencing.Token(newest)}
	}
	return nil
}

// checkToken refuses the tokens that no lock issues.
func checkToken(resource string, token fencing.Token) error {
	switch {
	case token.IsZero():
		return fmt.Errorf("pgguard: %w for %q", fencing.ErrNoToken, resource)
	case token > math.MaxInt64:
		return fmt.Errorf("pgguard: %w: token %s for %q is above %d, the largest the fence table's bigint holds",
			ErrTokenRange, token, resource, int64(math.MaxInt64))
	}
	return nil
}

// Do runs write in a transaction of its own, after admitting token for
// resource in it (see [Guard.Admit]), and commits if write returns nil.
// The context write gets carries the transaction: write makes its
// protected changes through [Tx]. Do rolls back on any error: a stale or
// refused token (then write is not called), write's error (which Do
// returns as it is), or a failed commit. It implements [fencing.Guard],
// and fails on a guard made with a nil pool.
func (g *Guard) Do(ctx context.Context, resource string, token fencing.Token, write func(context.Context) error) error {
	if g.pool == nil {
		return errors.New("pgguard: Do needs a pool, and the guard was made with none")
	}
	if err := checkToken(resource, token); err != nil {
		return err
	}
	tx, err := g.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pgguard: beginning a transaction for %q: %w", resource, err)
	}
	committed := false
	defer func() {
		if !committed { // also when write panics
			rollback(ctx, tx)
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
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("pgguard: committing the write to %q under token %s: %w", resource, token, err)
	}
	return nil
}

// rollbackTimeout bounds a rollback, which runs even when the caller's
// context is done.
const rollbackTimeout = 5 * time.Second

// rollback rolls tx back under its own timeout, not the caller's
// (possibly cancelled) context. A failure closes the connection, which
// ends the transaction too, so there is nothing to report.
func rollback(ctx context.Context, tx pgx.Tx) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	tx.Rollback(ctx)
}

type txKey struct{}

// Tx returns the transaction of [Guard.Do] that ctx (a context given to
// Do's write, or derived from one) carries, and nil if it carries none.
func Tx(ctx context.Context) pgx.Tx {
	tx, _ := ctx.Value(txKey{}).(pgx.Tx)
	return tx
}
