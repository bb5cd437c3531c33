// Package mysql is a lock driver for MariaDB and MySQL, registered as
// "mysql", over github.com/go-sql-driver/mysql. Locks are leases in an
// InnoDB table, and the server's clock (UTC_TIMESTAMP(6)) decides when a
// lease has ended, so clients' clocks never decide who owns a key. Every
// key has a fencing counter in its own row, raised by the statement that
// grants the lock. Acquire, Extend, Release and handovers are one
// statement and one round trip each. Rows are never deleted, so a key's
// tokens never go back.
//
//	import _ "github.com/distlock/lock/drivers/mysql"
//
//	c, err := lock.Open("mysql", "app:secret@tcp(db.example.com:3306)/app?distlock_table=app_locks")
//
// A program that already has a *sql.DB passes it to [New], and the
// connector to lock.OpenConnector. Otherwise each lock.Client gets a pool
// of its own, which keeps up to 16 idle connections for a minute.
//
// The DSN is go-sql-driver's own (user:password@tcp(host:3306)/dbname?...),
// read by its ParseDSN, with all of its parameters. It must name its
// server as net(address) and a database: an empty DSN, or one that leaves
// either out, is an error at Open, rather than a connection to
// 127.0.0.1:3306. A DSN with tls=name needs the name registered with
// mysql.RegisterTLSConfig before lock.Open. The driver's own parameters
// (any other distlock_ parameter is an error) are:
//
//	distlock_table            the lease table, in the DSN's database (default distlock_leases)
//	distlock_create_table     false: never create or alter the table, only check that it exists (default true)
//	distlock_request_timeout  the bound of each call, connecting included (default 5s, DefaultRequestTimeout)
//
// The table name is letters, digits and '_', not starting with a digit, at
// most 64 bytes. lock.Open reports a malformed DSN without contacting the
// server; no error and no String method shows a password.
//
// A table made by versions before values grew to 192 characters has a
// value column of 64 bytes. The driver widens it when it connects, unless
// told not to touch the table (distlock_create_table=false) or the ALTER
// fails. Then a value that does not fit, such as a long leader value of
// lock.Election, fails at once with an error matching
// lock.ErrMisconfigured that says what to run.
//
// A connection implements driver.Dropper: Drop drops its lease table, for
// tools that work in a scratch table of their own. It refuses, with an
// error matching [ErrNotScratch] and lock.ErrMisconfigured, the default
// table (no distlock_table, or distlock_leases named) and a table with
// distlock_create_table=false, which is not the driver's. Tokens of a
// table made again start from 1. It also implements driver.ScratchLister:
// ListScratch lists the tables of the DSN's database whose names begin
// with a prefix ("distlock_verify_"), so that such a tool finds the
// scratch tables an earlier run left.
//
// Every call ends when the caller's context ends or the request timeout
// runs out, whichever comes first, connecting included. A call that ran
// out of the request timeout, or whose connection broke, fails with an
// error matching lock.ErrUnavailable. Errors that retrying cannot fix match
// lock.ErrMisconfigured, so that Acquire ends at once: a refused password
// or account (1045, 1698, a locked account), a database the account may
// not use or that does not exist (1044, 1049), a missing table or
// privilege (1146, 1142), a session with autocommit off, a table of
// another engine than InnoDB, and go-sql-driver's refusals of TLS or of an
// authentication method. A connection's Close cuts its calls in flight
// short and returns within a second. A pool the driver opens from a DSN
// logs nothing of its own: go-sql-driver's log lines about broken
// connections would repeat the errors the calls return. On a pool opened from a DSN, the
// driver dials the connections itself (for the networks tcp, tcp4, tcp6
// and unix, or through lock.OpenDialer's dial), with read and write
// deadlines of the request timeout at most: a dial registered with
// mysql.RegisterDialContext for one of those names is not used. Register
// it under a name of its own to have it used.
//
// Waiters wake by polling: MySQL has no NOTIFY. A client that waits polls
// the keys it waits for in one read, 2ms after it starts waiting, and
// wakes its waiters when a key is free or has changed hands since the
// last poll, polling again 2ms later. While the keys stay under the same
// grants it polls less often, up to every 100ms, and never later than the
// end of the first grant to end.
//
// MariaDB 10.6 and later is tested here (10.11). MySQL 8.0 and later is
// expected to work and is untested here: the statements are one set that
// both accept. Where they differ, and the driver cares:
//   - RETURNING exists only on MariaDB. The driver does not use it: a grant
//     reports its token through LAST_INSERT_ID(expr), which both servers
//     send back with the statement's result.
//   - The row counts of INSERT ... ON DUPLICATE KEY UPDATE (1, 2, or 0 or
//     1 for a row left as it was, depending on clientFoundRows) are not
//     read: the driver's statements depend on no connection flag.
//   - NOW(6) follows the session's time zone, which under a SYSTEM zone
//     with daylight saving moves by an hour. The driver uses
//     UTC_TIMESTAMP(6) on both.
//   - MySQL 8 authenticates with caching_sha2_password by default, which
//     needs TLS or the server's RSA key (serverPubKey, or
//     allowPublicKeyRetrieval) at the first login. MariaDB's ed25519 plugin
//     is supported by go-sql-driver. A plugin go-sql-driver cannot do is
//     reported as ErrMisconfigured.
//   - VALUES() in ON DUPLICATE KEY UPDATE is deprecated on MySQL 8.0.20+
//     and unknown as row alias syntax on MariaDB: the driver uses neither.
//
// Tokens and leases are as durable as the server's commits. The promises
// need innodb_flush_log_at_trx_commit=1, and sync_binlog=1 where a binary
// log is kept. With asynchronous replication, a failover to a replica can
// lose the latest grants: the new primary may then grant a key that is
// still held, and hand out a token again. Use semi-synchronous
// replication, or a cluster that commits on a majority, where that
// matters.
//
// What it does not guarantee, and what to do about it:
//   - A step of the server's clock lengthens or shortens every lease by the
//     step.
//   - Rows are never deleted: the table keeps a row per key ever acquired.
//     A program with unbounded sets of keys may delete rows whose lease
//     ended long ago, and those keys' tokens then start again from 1.
//   - A statement that reached a server which then hung runs when the server
//     resumes, even after its caller gave up. A grant that nobody holds may
//     then keep its key until its TTL runs out.
//   - Leases live in the table, not in sessions: a client whose connections
//     are cut keeps its locks until their TTL runs out.
//
// There is no GET_LOCK mode. A named lock belongs to a session: a dropped
// connection frees it while its holder goes on working, which is the
// failure a lease exists to prevent. It has no TTL, so a holder that hangs
// with its connection open holds it for ever. It gives no fencing token,
// and it pins a connection of the pool for as long as it is held. What it
// would give is a wait without polling, served in order by the server.
//
// The design, the argument for its safety, and the measurements that chose
// it are in DESIGN.md beside this file.
package mysql
