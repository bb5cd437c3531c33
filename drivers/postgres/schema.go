package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/distlock/lock/driver"
	"github.com/jackc/pgx/v5"

	"github.com/distlock/lock/internal/pgtable"
)

// DefaultTable is the lease table's name when the DSN or [Config] names
// none.
const DefaultTable = "distlock_leases"

// maxTableName is the longest table name accepted, in bytes: the name is
// also the NOTIFY channel, and channel names are identifiers, which
// PostgreSQL limits to 63 bytes.
const maxTableName = 63

// table is a validated lease table name and the statements that use it.
// The name and the channel are spliced into SQL text only after validation,
// and then quoted; keys, values and TTLs only ever travel as bind
// parameters.
type table struct {
	name  string // as configured: "locks" or "schema.locks"; also the channel
	ident string // the name quoted as an identifier

	acquire, acquireGuarded, extend, release, transfer, inspect, watch string // one statement each
	create, listen, drop                                               string

	// scratch is nil if the table may be dropped, and otherwise the
	// reason it may not (see scratchTable).
	scratch error
}

// newTable validates name ("" means DefaultTable) and prepares the
// statements on the table it names.
func newTable(name string) (*table, error) {
	if name == "" {
		name = DefaultTable
	}
	if len(name) > maxTableName {
		return nil, fmt.Errorf("table name is %d bytes long, over the maximum of %d", len(name), maxTableName)
	}
	ident, err := pgtable.Quote(name)
	if err != nil {
		return nil, err
	}
	t := &table{name: name, ident: ident}
	channel := quoteLiteral(name)

	// Acquire grants the key if nobody holds it, bumping the key's fencing
	// counter in the same statement, under the row lock that ON CONFLICT
	// takes, so tokens come out in the order of grants. Whether a lease has
	// ended is judged by the server's clock when the row is examined
	// (clock_timestamp(), not the statement's start, now(), which is stale
	// for a statement that waited for the row lock). ON CONFLICT locks the
	// row before it looks at the lease, so an attempt on a held key writes
	// a row lock, and with it a transaction ID and WAL.
	insert := `INSERT INTO ` + t.ident + ` AS l (key, value, fence, expires_at)
`
	grant := `
ON CONFLICT (key) DO UPDATE
SET value = excluded.value, fence = l.fence + 1, expires_at = clock_timestamp() + $3::interval
WHERE l.expires_at <= clock_timestamp()
RETURNING fence`
	t.acquire = insert + `VALUES ($1::text, $2::text, 1, clock_timestamp() + $3::interval)` + grant

	// AcquireGuarded is acquire behind a NOT EXISTS guard that reads the
	// row without locking it: an attempt on a held key then writes nothing,
	// neither a row lock nor WAL, but every attempt pays for a second look
	// at the row. The driver uses it for keys it last found held, where
	// refusals are likely: waiters' retries, and pollers.
	t.acquireGuarded = insert + `SELECT $1::text, $2::text, 1, clock_timestamp() + $3::interval
WHERE NOT EXISTS (SELECT 1 FROM ` + t.ident + ` WHERE key = $1::text AND expires_at > clock_timestamp())` + grant

	// Extend never revives a lease that has ended, even if nobody took the
	// key since.
	t.extend = `UPDATE ` + t.ident + ` SET expires_at = clock_timestamp() + $3::interval
WHERE key = $1 AND value = $2 AND expires_at > clock_timestamp()`

	// Release ends the lease now and keeps the row, so the key's fencing
	// counter never goes back. If anyone has ever waited for the key, it
	// announces the release, which listeners hear when it commits. (NOTIFY
	// serializes the commits of all notifying transactions of the server,
	// so releases that nobody waits for are better off without it.) The
	// announcement is made in the SET list, where CASE evaluates it only for
	// a watched row and leaves watched as it was, rather than in a
	// RETURNING list, which would cost every release a row sent back.
	t.release = `UPDATE ` + t.ident + ` SET expires_at = clock_timestamp(),
	watched = CASE WHEN watched THEN pg_notify(` + channel + `, key) IS NOT NULL ELSE false END
WHERE key = $1 AND value = $2 AND expires_at > clock_timestamp()`

	// Transfer gives a held lease to a new value, with the next fence,
	// in one statement; the key is never free, so nothing is announced.
	t.transfer = `UPDATE ` + t.ident + ` SET value = $3, fence = fence + 1, expires_at = clock_timestamp() + $4::interval
WHERE key = $1 AND value = $2 AND expires_at > clock_timestamp()
RETURNING fence`

	// Watch marks the key as waited for, from now on, so that its releases
	// are announced, adding a row that nobody holds for a key never
	// acquired. It writes nothing if the key is marked already.
	t.watch = `INSERT INTO ` + t.ident + ` AS l (key, value, fence, expires_at, watched)
SELECT $1::text, '', 0, '-infinity', true
WHERE NOT EXISTS (SELECT 1 FROM ` + t.ident + ` WHERE key = $1::text AND watched)
ON CONFLICT (key) DO UPDATE SET watched = true`

	t.inspect = `SELECT value, fence, floor(extract(epoch FROM expires_at - clock_timestamp()) * 1000000)::bigint
FROM ` + t.ident + ` WHERE key = $1 AND expires_at > clock_timestamp()`

	// A low fillfactor keeps a hot key's chain of row versions short: see
	// "Fillfactor" in DESIGN.md.
	t.create = `CREATE TABLE IF NOT EXISTS ` + t.ident + ` (
	key        text COLLATE "C" PRIMARY KEY,
	value      text        NOT NULL,
	fence      bigint      NOT NULL,
	expires_at timestamptz NOT NULL,
	watched    boolean     NOT NULL DEFAULT false
) WITH (fillfactor = 25)`
	t.listen = `LISTEN ` + pgx.Identifier{name}.Sanitize()
	t.drop = `DROP TABLE IF EXISTS ` + t.ident
	return t, nil
}

// ErrNotScratch is Drop's error for a table that is not a scratch table
// of its own: the default table, or one the driver was told not to
// create. It matches driver.ErrMisconfigured.
var ErrNotScratch = fmt.Errorf("%w: not a scratch table", driver.ErrMisconfigured)

// scratchTable returns nil if name, the table of cfg, is a scratch table
// that Drop may delete, and otherwise why not. The default table is
// shared by every program that names no table, under any schema, and a
// table the driver may not create belongs to the schema's owner.
func scratchTable(name string, cfg Config) error {
	_, last, _ := strings.Cut(name, ".")
	if last == "" {
		last = name
	}
	switch {
	case cfg.Table == "" || last == DefaultTable:
		return fmt.Errorf("%w: %s is the default table; name a table of its own with distlock_table", ErrNotScratch, name)
	case cfg.NoCreate:
		return fmt.Errorf("%w: table %s is not the driver's to create (distlock_create_table=false), so not its to drop", ErrNotScratch, name)
	}
	return nil
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string {
	return `'` + strings.ReplaceAll(s, `'`, `''`) + `'`
}

// ensure makes sure the table exists, creating it if create is set.
func (t *table) ensure(ctx context.Context, db pgtable.Querier, create bool) error {
	stmt := ""
	if create {
		stmt = t.create
	}
	err := pgtable.Ensure(ctx, db, t.ident, stmt)
	switch {
	case errors.Is(err, pgtable.ErrMissing):
		return fmt.Errorf("%w: table %s does not exist, and the driver was told not to create it (distlock_create_table=false)",
			driver.ErrMisconfigured, t.name)
	case err != nil:
		return fmt.Errorf("table %s: %w", t.name, err)
	}
	return nil
}
