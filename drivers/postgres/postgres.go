// Package postgres is a lock driver for PostgreSQL, registered as
// "postgres", over github.com/jackc/pgx/v5. Locks are leases in a table;
// whether a lease has ended is judged by the server's clock; every key has
// a fencing counter that grows with each acquisition; releases are
// announced with NOTIFY, so that waiters wake at once.
//
//	import _ "github.com/distlock/lock/drivers/postgres"
//
//	c, err := lock.Open("postgres", "postgres://app@db.example.com/app?distlock_table=app_locks")
//
// A program that already has a pool hands it to [New] instead:
//
//	connector, err := postgres.New(pool, postgres.Config{Table: "app_locks"})
//	...
//	c := lock.OpenConnector(connector)
//
// # DSN
//
// The DSN is anything pgx accepts: a postgres:// or postgresql:// URL, or a
// keyword/value string ("host=db user=app dbname=app"), with the PG*
// environment variables as defaults and pgxpool's pool_* parameters
// (pool_max_conns and so on). The driver's own parameters, which it removes
// before handing the rest to pgx, are:
//
//	distlock_table         the lease table: a name, or schema.name (default distlock_leases)
//	distlock_create_table  true (the default): create the table if it is missing;
//	                       false: leave the schema alone, and only check that the table exists
//
// Any other parameter starting with "distlock_" is an error. The table name
// is letters, digits and '_' (not starting with a digit), optionally
// qualified by a schema, at most 63 bytes in all; it is used as written,
// quoted, so it is case-sensitive. The schema must exist. lock.Open parses
// the whole DSN and reports a malformed one without contacting the server.
// No error, and no String method, ever shows a password: errors from pgx's
// parser are passed on as text, with every password of the DSN taken out.
//
// Each lock.Client opened on a DSN gets a pgx pool of its own, and, from
// the first time it waits for a key, one more connection to listen on.
//
// # The table
//
// The driver creates the table when a client first connects, if it is
// missing (racing creators are fine), unless told not to:
//
//	CREATE TABLE IF NOT EXISTS distlock_leases (
//		key        text COLLATE "C" PRIMARY KEY,
//		value      text        NOT NULL, -- the value of the latest grant
//		fence      bigint      NOT NULL, -- the key's fencing counter: the token of the latest grant
//		expires_at timestamptz NOT NULL, -- the end of the latest lease, by the server's clock
//		watched    boolean     NOT NULL DEFAULT false -- someone has waited for the key: announce its releases
//	) WITH (fillfactor = 25)
//
// A key is held while expires_at is in the future. Rows are never deleted,
// so that a key's counter never goes back: the table keeps one row per key
// ever used (and per key ever waited for). A program that uses unbounded
// sets of keys may delete rows whose lease ended long ago, accepting that
// those keys' tokens start again from 1.
//
// Every acquisition and release updates its key's row in place, leaving
// the old version behind on the page, and every statement on the key walks
// the versions not yet pruned. The server prunes a page once its free space
// falls below what the fillfactor reserves: at 25, a hot key's page is
// pruned every twenty-odd versions rather than every eighty at 80, which
// cuts the server's work for an acquire and release on one hot key by a
// tenth (183,000 instructions to 166,000, counted with callgrind; a
// hand-written lease lock that deletes and inserts costs 156,000), for four
// times the space of a freshly filled table: about 350 bytes per key. An
// existing table keeps its own (ALTER TABLE ... SET (fillfactor = 25)
// changes it for the pages written from then on).
//
// # Statements
//
// Acquire, Extend and Release are one statement and one round trip each,
// once pgx has prepared them on a connection (which it does at their first
// use there, and keeps):
//
//   - Acquire: INSERT ... ON CONFLICT (key) DO UPDATE SET value = ..., fence
//     = fence + 1, expires_at = clock_timestamp() + ttl WHERE expires_at <=
//     clock_timestamp() RETURNING fence. The token is bumped in the
//     statement that grants the lock, under the row lock, so the tokens of
//     a key come out in the order of its grants. ON CONFLICT locks the row
//     before it looks at the lease, so a refusal writes a row lock (a
//     transaction ID, WAL, a commit to flush). For a key whose last attempt
//     on this client was refused (a waiter's retries, a poller's), the
//     statement adds a NOT EXISTS guard that turns a held key away by
//     reading the row without locking it, so that those refusals write
//     nothing; the first attempt after a success goes back to the plain
//     statement, which a guard would slow by a second look at the row
//     (about 36,000 of the server's instructions per acquire and release,
//     counted with callgrind: a sixth of the pair).
//   - Extend: UPDATE ... SET expires_at = clock_timestamp() + ttl WHERE key
//     = $1 AND value = $2 AND expires_at > clock_timestamp(): a lease that
//     has ended is never revived, even if nobody took the key since.
//   - Release: UPDATE ... SET expires_at = clock_timestamp() WHERE key = $1
//     AND value = $2 AND expires_at > clock_timestamp(), which also calls
//     pg_notify(table, key) if the row is watched.
//   - Transfer (the core's handover of a released lock to a call of the
//     same client waiting for the key): UPDATE ... SET value = next, fence =
//     fence + 1, expires_at = clock_timestamp() + ttl WHERE key = $1 AND
//     value = $2 AND expires_at > clock_timestamp() RETURNING fence. The
//     key is never free in between, so nothing is announced; with eight
//     goroutines of one client taking turns at a key, a handoff costs one
//     round trip instead of two.
//
// Keys and values travel only as bind parameters. TTLs go to the server as
// intervals, rounded up to the microsecond, so that the server's lease is
// never shorter than asked.
//
// # Guarantees
//
// Whether a lease has ended is decided by the server's clock, read when the
// row is examined (clock_timestamp(): now(), the statement's start, would be
// stale in a statement that waited for the row lock), so clients' clocks
// never decide who owns a key. A lease starts when the server grants it,
// which is after the clock reading the core counts validity from. Mutual
// exclusion then holds as long as the server's clock runs no slower than the
// client's beyond the drift allowance: a step of the server's clock (set by
// hand, or stepped by NTP) lengthens or shortens every lease by the step.
//
// The tokens of a key strictly increase, across all clients, as long as its
// row is kept and committed grants survive: they are as durable as the
// server's commits. The default is the strongest the server offers: on the
// connections of its own pools, the driver raises synchronous_commit to "on"
// where the server has it at "off", "local" or "remote_write", unless the
// DSN sets synchronous_commit itself. With asynchronous replication, a
// failover can still lose the latest grants, and so hand out their tokens
// again; use synchronous replication where that matters. A pool given to
// [New] is used as it is configured.
//
// # Wake-ups
//
// A client listens for releases on one dedicated connection, opened the
// first time one of its callers waits for a key and kept until the client
// is closed; the channel is named like the table (schema.name if
// qualified), and the payload is the key. It hands each notification to the
// waiters of that key in this client, unless the client has itself taken
// the key again since (its own grant, still running, shows that the
// release came before it; the key's next release is announced as usual).
// Before a caller first waits for a key, the client marks the key's row as watched (one round trip, then
// remembered for a minute), and from then on every release of the key
// notifies, in the statement that releases it, so that listeners hear of it
// when it commits. Releases of keys that nobody has waited for do not
// notify: NOTIFY serializes the commits of every notifying transaction of
// the server, and those releases need not pay for it.
//
// A lease that simply runs out is not announced: waiters find the key free
// at their next poll, which the core keeps as a safety net. LISTEN does not
// pass through poolers in transaction mode (PgBouncer and the like), where
// waiters therefore poll.
//
// # Connection loss
//
// Leases live in the table, not in sessions. A client whose connections are
// cut (terminated, or the server restarted) keeps its locks until their TTL
// runs out, and its next call either fails, with an error that matches
// neither lock.ErrNotAcquired nor lock.ErrNotHeld, or succeeds on a new
// connection (pgx pings a pooled connection that has been idle for more than
// a second before using it). A call whose connection broke while it was in
// flight may or may not have taken effect; the core releases an
// acquisition whose answer was lost. The listening connection reconnects
// with backoff (50ms, doubling up to 2s), pings the server after 30 seconds
// of silence so that a connection that died quietly is found out, and after
// every reconnection wakes every waiter of its client, since a release may
// have gone unheard meanwhile.
//
// # Why not advisory locks
//
// PostgreSQL's session advisory locks (pg_advisory_lock) are the other
// way to lock with PostgreSQL, and the driver does not offer them, for what
// they lack: a lock lives as long as its session, with no TTL, so a holder
// that hangs with its connection open holds it forever; there is no counter
// to draw fencing tokens from without a table anyway; each held lock pins a
// connection of the pool; keys are 64-bit numbers, so string keys must be
// hashed, and two keys can collide; and a pooler in transaction mode
// (PgBouncer and the like) hands a session's statements to different
// server sessions, which breaks them. Nor are they faster here: with eight
// goroutines taking turns on a key, holding it 1ms, the lease table hands
// the key over as often per second as pg_advisory_lock on eight held
// connections (BenchmarkHandoff).
package postgres

import (
	"context"
	"fmt"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

func init() {
	lock.Register("postgres", Driver{})
}

// Driver is the PostgreSQL driver. Its zero value is ready to use; lock.Open
// uses the one registered as "postgres".
type Driver struct{}

var _ driver.Driver = Driver{}

// OpenConnector parses dsn (see the package documentation) without
// contacting the server.
func (Driver) OpenConnector(dsn string) (driver.Connector, error) {
	s, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	c, err := newConnector(nil, s.pool, s.config)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Config is the driver's own configuration, for [New]. Its zero value asks
// for the defaults.
type Config struct {
	// Table is the lease table's name: letters, digits and '_', not
	// starting with a digit, optionally qualified by a schema ("locks",
	// "app.locks"), at most 63 bytes in all. It is used as written, quoted.
	// Empty means [DefaultTable].
	Table string

	// NoCreate leaves the schema alone: the driver only checks that the
	// table exists, and never creates it.
	NoCreate bool
}

// New returns a connector that uses pool, which the caller keeps and
// closes after the clients that use it. Every client opened on the
// connector shares the pool, and takes one connection out of it (for good)
// to listen for releases once it first waits for a key. The pool is used
// as it is configured; see the package documentation for what the driver
// sets on pools of its own.
func New(pool *pgxpool.Pool, cfg Config) (*Connector, error) {
	if pool == nil {
		return nil, fmt.Errorf("postgres: New: nil pool")
	}
	return newConnector(pool, nil, cfg)
}

// Connector opens connections to one database and lease table. It is a
// [driver.Connector], for lock.OpenConnector, and safe for concurrent use.
type Connector struct {
	pool    *pgxpool.Pool   // the caller's, from New; nil otherwise
	poolCfg *pgxpool.Config // from a DSN: each connection gets a pool of its own
	t       *table
	create  bool
}

var _ driver.Connector = (*Connector)(nil)

func newConnector(pool *pgxpool.Pool, poolCfg *pgxpool.Config, cfg Config) (*Connector, error) {
	t, err := newTable(cfg.Table)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return &Connector{pool: pool, poolCfg: poolCfg, t: t, create: !cfg.NoCreate}, nil
}

// Connect returns a connection, making sure the lease table exists first.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	pool, owned := c.pool, false
	if pool == nil {
		var err error
		pool, err = pgxpool.NewWithConfig(ctx, c.poolCfg.Copy())
		if err != nil {
			return nil, fmt.Errorf("postgres: %w", err)
		}
		owned = true
	}
	if err := c.t.ensure(ctx, pool, c.create); err != nil {
		if owned {
			pool.Close()
		}
		return nil, err
	}
	return newConn(pool, owned, c.t), nil
}

// String describes the connector without its password: server, database,
// user and table.
func (c *Connector) String() string {
	var cc *pgx.ConnConfig
	if c.pool != nil {
		cc = c.pool.Config().ConnConfig
	} else {
		cc = c.poolCfg.ConnConfig
	}
	return fmt.Sprintf("postgres(host=%s port=%d database=%s user=%s table=%s)",
		cc.Host, cc.Port, cc.Database, cc.User, c.t.name)
}

// GoString is String, so that %#v does not print the password either.
func (c *Connector) GoString() string { return c.String() }

// raiseSynchronousCommit makes commits on conn wait for the WAL to be
// flushed (and, with synchronous standbys, for them), unless the server is
// already configured to wait at least that long.
func raiseSynchronousCommit(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, `SELECT set_config('synchronous_commit', 'on', false)
WHERE current_setting('synchronous_commit') IN ('off', 'local', 'remote_write')`)
	return err
}
