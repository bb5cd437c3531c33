// Package postgres is a lock driver for PostgreSQL, registered as
// "postgres", over github.com/jackc/pgx/v5. Locks are leases in a table,
// and the server's clock decides when a lease has ended, so clients' clocks
// never decide who owns a key. Every key has a fencing counter that grows
// with each acquisition. Acquire, Extend and Release are one statement and
// one round trip each, and releases are announced with NOTIFY, so that
// waiters wake at once.
//
//	import _ "github.com/distlock/lock/drivers/postgres"
//
//	c, err := lock.Open("postgres", "postgres://app@db.example.com/app?distlock_table=app_locks")
//
// A program that already has a pool passes it to [New], and the connector
// to lock.OpenConnector. Otherwise each lock.Client gets a pgx pool of its
// own, of at least [DefaultMaxConns] (16) connections unless the DSN sets
// pool_max_conns: a call holds a connection for one round trip, and calls
// that find them all in use wait. Connections are opened only when calls
// need them at once. Either way a client takes one more connection, to
// listen on, the first time it waits for a key.
//
// The driver takes a dialer (driver.DialerDriver): with lock.OpenDialer,
// every connection to the server, the listening one included, is dialed by
// the caller's dial, and TLS runs over it.
//
// The DSN is anything pgx accepts: a postgres:// or postgresql:// URL or a
// keyword/value string, with pgxpool's pool_* parameters. It must name its
// server, a host and a database (postgres://host/dbname, or host=...
// dbname=...): a DSN that leaves either out, or has an empty entry in its
// host list, is an error, rather than a connection to whatever PGHOST,
// PGDATABASE or the local socket say. With distlock_libpq_env=true the
// DSN may leave them to libpq's environment variables and defaults. The
// other PG* environment variables (PGUSER, PGPASSWORD, PGSSLMODE...) are
// defaults for what the DSN does not set, as in pgx. The driver's own
// parameters (any other distlock_ parameter is an error) are:
//
//	distlock_table            the lease table: a name, or schema.name (default distlock_leases)
//	distlock_create_table     false: never create the table, only check that it exists (default true)
//	distlock_request_timeout  the bound of each call, connecting included (default 5s, DefaultRequestTimeout)
//	distlock_libpq_env        true: take the host and database the DSN leaves out from PGHOST,
//	                          PGDATABASE and libpq's defaults (default false)
//
// The table name is letters, digits and '_', not starting with a digit, at
// most 63 bytes with its schema; it is used as written, quoted, so it is
// case-sensitive, and its schema must exist. lock.Open reports a malformed
// DSN without contacting the server; no error and no String method shows a
// password.
//
// A connection implements driver.Dropper: Drop drops its lease table,
// with every lease in it, for tools that work in a scratch table of their
// own. It refuses, with an error matching [ErrNotScratch] and
// lock.ErrMisconfigured, a DSN that names no table of its own: one without
// distlock_table, one that names the default table (distlock_leases, in any
// schema), and one with distlock_create_table=false, whose table is not
// the driver's. Tokens of a table made again start from 1, so a dropped
// table's name is not for reuse where tokens matter. It also implements
// driver.ScratchLister: ListScratch lists the tables of the current schema
// whose names begin with a prefix ("distlock_verify_"), or those of schema
// s for a prefix "s.begin", so that such a tool finds the scratch tables
// an earlier run left.
//
// Every call ends when the caller's context ends or the request timeout
// runs out, whichever comes first, connecting included; a DSN without
// connect_timeout connects under the request timeout. A call that ran out
// of the request timeout fails with an error matching lock.ErrUnavailable.
// Errors that retrying cannot fix match lock.ErrMisconfigured, so that
// Acquire ends at once: SQLSTATE class 28 (a wrong password, an unknown
// role, no pg_hba.conf entry), 3D000 (no such database), 3F000 (no such
// schema), 42501 (a missing privilege), 42P01 (no lease table), and a
// missing table with distlock_create_table=false. A connection's Close
// cuts its calls in flight short and returns within a second;
// lock.Client.Close first waits for its calls in flight.
//
// Tokens are as durable as the server's commits. On the connections of its
// own pools the driver raises synchronous_commit to "on" where the server
// has it at "off", "local" or "remote_write", unless the DSN sets
// synchronous_commit; a pool given to [New] is used as it is configured.
// With asynchronous replication a failover can still lose the latest grants
// and hand their tokens out again: use synchronous replication where that
// matters.
//
// What it does not guarantee, and what to do about it:
//   - A step of the server's clock (by hand, or by NTP) lengthens or shortens
//     every lease by the step.
//   - Rows are never deleted, so that a key's tokens never go back: the table
//     keeps a row per key ever used or waited for. A program with unbounded
//     sets of keys may delete rows whose lease ended long ago, and those
//     keys' tokens then start again from 1.
//   - LISTEN does not pass through poolers in transaction mode (PgBouncer and
//     the like): there waiters poll. An expiry is not announced either;
//     waiters find the key free at their next poll.
//   - Leases live in the table, not in sessions: a client whose connections
//     are cut keeps its locks until their TTL runs out. A call cut in flight
//     may or may not have taken effect.
//   - There is no advisory-lock mode: pg_advisory_lock has no TTL, pins a
//     connection per lock, and breaks behind a pooler in transaction mode.
//
// The design, the argument for its safety, and the measurements that chose
// it are in DESIGN.md beside this file.
package postgres
