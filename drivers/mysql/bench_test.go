package mysql_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/distlock/lock"
	mysqldriver "github.com/distlock/lock/drivers/mysql"
	"github.com/distlock/lock/drivertest"
	"github.com/distlock/lock/internal/latency"
	"github.com/go-sql-driver/mysql"
)

// The benchmarks compare the driver, through the lock package, with what
// a program could write by hand on the same server in the same run:
//
//   - BenchmarkAcquireRelease: one uncontended acquisition and release,
//     against baselineLease, a hand-written one-statement lease lock
//     (INSERT ... ON DUPLICATE KEY UPDATE to take, DELETE to give back).
//     Its paired sub-benchmark alternates the two call by call and reports
//     the ratio of their p50s: the figure to judge the driver's overhead
//     by.
//   - BenchmarkAcquireRelease_parallel: the same from 16 goroutines on
//     distinct keys, alternating the two in 100ms windows, reporting both
//     rates and their ratio.
//   - BenchmarkStatements: the server's part of the first figure alone,
//     the driver's statements against the baseline's, on one connection
//     of one pool, alternated op by op.
//   - BenchmarkHandoff: 8 goroutines taking turns on one key, each holding
//     it for 1ms, through one client or through 8 (one each), against
//     GET_LOCK on 8 connections (what a GET_LOCK-based wake-up could reach
//     at best), and the hand-written lease polled every millisecond.
//
// Every pool has the settings of the driver's own: 16 idle connections
// kept for a minute, statements prepared once per connection, and read and
// write timeouts of the driver's request timeout (a hand-written lease
// needs them as much: without them a call to a hung server never ends).
// The baseline draws a 20-byte random value per acquisition, as the
// library does.

// benchPool returns a pool on dsn with the driver's pool settings.
func benchPool(b *testing.B, dsn string) *sql.DB {
	b.Helper()
	cfg := config(b, dsn)
	cfg.ReadTimeout = mysqldriver.DefaultRequestTimeout
	cfg.WriteTimeout = mysqldriver.DefaultRequestTimeout
	mc, err := mysql.NewConnector(cfg)
	if err != nil {
		b.Fatal(err)
	}
	db := sql.OpenDB(mc)
	b.Cleanup(func() { db.Close() })
	db.SetMaxIdleConns(16)
	db.SetConnMaxIdleTime(time.Minute)
	return db
}

// baselineLease is a hand-written lease lock: one statement to take a key,
// one to give it back, no fencing, no wake-ups.
type baselineLease struct {
	acquire, release *sql.Stmt
	ttl              int64 // microseconds
}

func newBaselineLease(b *testing.B, db *sql.DB, table string) *baselineLease {
	b.Helper()
	ctx := context.Background()
	t := "`" + table + "`"
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+t+` (
	k VARBINARY(512) NOT NULL PRIMARY KEY,
	v VARBINARY(64) NOT NULL,
	expires_at DATETIME(6) NOT NULL) ENGINE = InnoDB`); err != nil {
		b.Fatal(err)
	}
	acq, err := db.PrepareContext(ctx, "INSERT INTO "+t+` (k, v, expires_at) VALUES (?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)
ON DUPLICATE KEY UPDATE v = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(v), v),
expires_at = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(expires_at), expires_at)`)
	if err != nil {
		b.Fatal(err)
	}
	rel, err := db.PrepareContext(ctx, "DELETE FROM "+t+" WHERE k = ? AND v = ?")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { acq.Close(); rel.Close() })
	return &baselineLease{acquire: acq, release: rel, ttl: lock.DefaultTTL.Microseconds()}
}

// take acquires key, returning the value to release it with, or "" if it
// is held: the row count is 1 for an insert, 2 for a takeover, 0 for a
// refusal (with the default clientFoundRows=false).
func (bl *baselineLease) take(ctx context.Context, key string) (string, error) {
	value := newBaselineValue()
	res, err := bl.acquire.ExecContext(ctx, key, value, bl.ttl)
	if err != nil {
		return "", err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return "", err
	}
	return value, nil
}

// newBaselineValue draws a value of 20 random bytes, as the library does.
func newBaselineValue() string {
	var raw [20]byte
	rand.Read(raw[:])
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

func (bl *baselineLease) give(ctx context.Context, key, value string) error {
	_, err := bl.release.ExecContext(ctx, key, value)
	return err
}

// op is one acquisition and release of key by hand.
func (bl *baselineLease) op(key string) error {
	ctx := context.Background()
	v, err := bl.take(ctx, key)
	if err != nil {
		return err
	}
	if v == "" {
		return errHeld
	}
	return bl.give(ctx, key, v)
}

var errHeld = &heldError{}

type heldError struct{}

func (*heldError) Error() string { return "baseline: key held" }

func BenchmarkAcquireRelease(b *testing.B) {
	dsn := server(b)
	c := open(b, withTable(b, dsn))
	bl := newBaselineLease(b, benchPool(b, dsn), freshTable(b, dsn))
	key := "bench/" + drivertest.RandomHex(4)
	drivertest.BenchAcquireRelease(b, c, "baseline", func(b *testing.B) {
		if err := bl.op(key); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkAcquireRelease_parallel(b *testing.B) {
	const goroutines = 16
	dsn := server(b)
	c := open(b, withTable(b, dsn))
	bl := newBaselineLease(b, benchPool(b, dsn), freshTable(b, dsn))
	drivertest.BenchParallelPaired(b, goroutines, drivertest.AcquireRelease(c), bl.op)
}

// BenchmarkStatements runs the driver's acquire and release statements,
// and the baseline's, prepared on the same single connection and
// alternated op by op, each side drawing its value as the library does.
// Neither the client's code, nor the pool, nor a switch of connections
// (which costs the op after it 5-15%) tells them apart: what is left is
// the server's work on the statements.
func BenchmarkStatements(b *testing.B) {
	driverOp, bl := statementsBeside(b, 1)
	key := "stmt/" + drivertest.RandomHex(4)
	drivertest.BenchPaired(b, func(b *testing.B) {
		if err := driverOp(key); err != nil {
			b.Fatal(err)
		}
	}, func(b *testing.B) {
		if err := bl.op(key); err != nil {
			b.Fatal(err)
		}
	})
}

// statementsBeside returns the driver's acquire and release statements as
// one operation on a key (see ourStatements), and the baseline lease, both
// on one pool of the driver's settings with at most maxOpen connections
// (0 for no limit).
func statementsBeside(b *testing.B, maxOpen int) (func(key string) error, *baselineLease) {
	dsn := server(b)
	db := benchPool(b, dsn)
	db.SetMaxOpenConns(maxOpen)
	return ourStatements(b, db, dsn), newBaselineLease(b, db, freshTable(b, dsn))
}

// ourStatements returns the driver's acquire and release statements, on a
// fresh table that a client of the driver creates, as one operation on a
// key through db, bound by hand (without the lock package) as conn.Acquire
// and conn.Release bind them: a fenced lease written by hand, which keeps
// its rows so that a key's fence never goes back.
func ourStatements(b *testing.B, db *sql.DB, dsn string) func(key string) error {
	ctx := context.Background()
	table := freshTable(b, dsn)
	if err := open(b, drivertest.WithParams(dsn, "distlock_table", table)).Ping(ctx); err != nil {
		b.Fatal(err) // the driver creates its table
	}
	acquireSQL, releaseSQL := mysqldriver.Statements(table)
	acquire, err := db.PrepareContext(ctx, acquireSQL)
	if err != nil {
		b.Fatal(err)
	}
	release, err := db.PrepareContext(ctx, releaseSQL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { acquire.Close(); release.Close() })
	us := lock.DefaultTTL.Microseconds()
	return func(key string) error {
		value := newBaselineValue()
		res, err := acquire.ExecContext(ctx, key, value, us, value, us)
		if err != nil {
			return err
		}
		if fence, _ := res.LastInsertId(); fence == 0 {
			return errors.New("the driver's acquire statement was refused")
		}
		if res, err = release.ExecContext(ctx, key, value); err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return errors.New("the driver's release statement released nothing")
		}
		return nil
	}
}

// BenchmarkHandWritten puts the driver beside hand-written leases on the
// same server in the same run, alternating them in 100ms windows
// (drivertest.BenchAlternating), from 16 goroutines on distinct keys and
// from one goroutine, each on a pool of its own with the driver's pool
// settings. The contenders:
//
//   - hand: baselineLease, the plain lease, which deletes its row on
//     release and issues no token;
//   - hand-again: the same on a pool and a table of its own, the control:
//     its ratios to hand are the method's own error;
//   - hand-fenced: the driver's statements sent by hand (ourStatements), a
//     lease with a fencing token, which must keep its rows: what the token
//     costs the server;
//   - ours: lock.Open("mysql", dsn).
//
// ours against hand-fenced is what the library adds to the statements;
// hand-fenced against hand is what the token costs. The figures are in
// bench/README.md.
func BenchmarkHandWritten(b *testing.B) {
	dsn := server(b)
	contenders := []drivertest.Contender{
		{Name: "hand", Op: newBaselineLease(b, benchPool(b, dsn), freshTable(b, dsn)).op},
		{Name: "hand-again", Op: newBaselineLease(b, benchPool(b, dsn), freshTable(b, dsn)).op},
		{Name: "hand-fenced", Op: ourStatements(b, benchPool(b, dsn), dsn)},
		{Name: "ours", Op: drivertest.AcquireRelease(open(b, withTable(b, dsn)))},
	}
	for _, g := range []int{16, 1} {
		b.Run("goroutines="+strconv.Itoa(g), func(b *testing.B) {
			drivertest.BenchAlternating(b, g, contenders...)
		})
	}
}

func BenchmarkHandoff(b *testing.B) {
	const goroutines = 8
	dsn := server(b)
	full := withTable(b, dsn)
	drivertest.BenchHandoff(b, func(b *testing.B) *lock.Client { return open(b, full) }, "get_lock", func(b *testing.B) drivertest.Take {
		db := benchPool(b, dsn)
		conns := make([]*sql.Conn, goroutines)
		for i := range conns {
			c, err := db.Conn(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { c.Close() })
			conns[i] = c
		}
		name := "bench/" + drivertest.RandomHex(4)
		return func(ctx context.Context, g int) (func() error, error) {
			var ok sql.NullInt64
			for !ok.Valid || ok.Int64 != 1 {
				if err := conns[g].QueryRowContext(ctx, "SELECT GET_LOCK(?, 60)", name).Scan(&ok); err != nil {
					return nil, err
				}
			}
			return func() error {
				_, err := conns[g].ExecContext(ctx, "DO RELEASE_LOCK(?)", name)
				return err
			}, nil
		}
	})
	b.Run("lease-poll-1ms", func(b *testing.B) {
		bl := newBaselineLease(b, benchPool(b, dsn), freshTable(b, dsn))
		key := "handoff/" + drivertest.RandomHex(4)
		latency.Handoff(b, goroutines, time.Millisecond, func(ctx context.Context, g int) (func() error, error) {
			for {
				v, err := bl.take(ctx, key)
				var me *mysql.MySQLError
				if errors.As(err, &me) && me.Number == 1213 {
					continue // a deadlock of its inserts and deletes: try again
				}
				if err != nil {
					return nil, err
				}
				if v != "" {
					return func() error { return bl.give(ctx, key, v) }, nil
				}
				time.Sleep(time.Millisecond)
			}
		})
	})
}

// BenchmarkStatements_parallel is BenchmarkStatements from 16 goroutines
// on distinct keys, on a pool of the driver's settings, alternating the
// driver's statements (bound by hand, without the lock package) and the
// baseline's in 100ms windows (drivertest.BenchParallelPaired): what is
// left of BenchmarkAcquireRelease_parallel's gap without the client
// library is the server's work on the statements under concurrency.
func BenchmarkStatements_parallel(b *testing.B) {
	driverOp, bl := statementsBeside(b, 0)
	drivertest.BenchParallelPaired(b, 16, driverOp, bl.op)
}
