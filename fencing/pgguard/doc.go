// Package pgguard is a fencing guard whose fences live in a PostgreSQL
// table, over github.com/jackc/pgx/v5. The table holds, for each resource,
// the newest token admitted; [Guard.Admit] checks and raises it with one
// statement in the caller's own transaction, so that the check and the
// protected write commit, or roll back, together.
//
//	g, err := pgguard.New(ctx, pool, pgguard.Config{Table: "app_fences"})
//	...
//	tx, err := pool.Begin(ctx)
//	if err != nil {
//		return err
//	}
//	defer tx.Rollback(ctx) // after Commit, a no-op
//	if err := g.Admit(ctx, tx, "invoice/42", token); err != nil {
//		return err // errors.Is(err, fencing.ErrStale): a newer holder came since
//	}
//	if _, err := tx.Exec(ctx, `UPDATE invoices SET paid = true WHERE id = 42`); err != nil {
//		return err
//	}
//	return tx.Commit(ctx)
//
// Admit locks the resource's row until the transaction ends, so guarded
// writers of one resource run one after the other, and a stale holder's
// write never lands after a newer one's. [Guard.Do] runs a write in a
// transaction of its own, which the write finds with [Tx]; it makes the
// guard a [fencing.Guard], for [fencing.Middleware].
//
// The table (default [DefaultTable]) has a row per resource ever admitted:
//
//	resource text COLLATE "C" PRIMARY KEY, token bigint NOT NULL
//
// Its name is letters, digits and '_', not starting with a digit,
// optionally qualified by a schema, at most 63 bytes a part; it is used as
// written, quoted, so it is case-sensitive. Tokens are stored as bigint,
// so tokens above math.MaxInt64 are refused ([ErrTokenRange]); no lock of
// this module issues them. Deleting a row forgets the resource's fence.
package pgguard
