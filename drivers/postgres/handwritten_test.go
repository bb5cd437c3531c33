package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/postgres"
	"github.com/distlock/lock/drivertest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// handPool is the hand-written leases' pool size: what the skeptic of
// issue 33 gave them.
const handPool = 32

// handLease is the lease lock a skeptic writes by hand: one statement to
// take a key, one to give it back, with a random 16-byte owner.
type handLease struct {
	pool                   *pgxpool.Pool
	acquireSQL, releaseSQL string
	ttl                    time.Duration
}

// newHandLease creates table and returns the hand-written lease on it.
// The plain one deletes its row on release, and issues no token. The
// fenced one also raises a per-key counter in the statement that grants
// the key, and so keeps its rows (ending the lease on release) so that
// the counter never goes back.
func newHandLease(b *testing.B, pool *pgxpool.Pool, table string, fenced bool) *handLease {
	b.Helper()
	t := pgx.Identifier{table}.Sanitize()
	h := &handLease{pool: pool, ttl: lock.DefaultTTL}
	create := `CREATE TABLE ` + t + ` (key text PRIMARY KEY, owner bytea NOT NULL, expires_at timestamptz NOT NULL)`
	h.acquireSQL = `INSERT INTO ` + t + ` AS locks (key, owner, expires_at) VALUES ($1, $2, now() + $3::interval)
ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
WHERE locks.expires_at < now() RETURNING owner`
	h.releaseSQL = `DELETE FROM ` + t + ` WHERE key = $1 AND owner = $2`
	if fenced {
		create = `CREATE TABLE ` + t + ` (key text PRIMARY KEY, owner bytea NOT NULL, fence bigint NOT NULL, expires_at timestamptz NOT NULL)`
		h.acquireSQL = `INSERT INTO ` + t + ` AS locks (key, owner, fence, expires_at) VALUES ($1, $2, 1, now() + $3::interval)
ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, fence = locks.fence + 1, expires_at = excluded.expires_at
WHERE locks.expires_at < now() RETURNING fence`
		h.releaseSQL = `UPDATE ` + t + ` SET expires_at = now() WHERE key = $1 AND owner = $2 AND expires_at > now()`
	}
	if _, err := pool.Exec(context.Background(), create); err != nil {
		b.Fatal(err)
	}
	return h
}

// acquire takes key, returning its owner value, or nil if key is held.
func (h *handLease) acquire(ctx context.Context, key string) ([]byte, error) {
	owner := make([]byte, 16)
	rand.Read(owner)
	var got []byte
	err := h.pool.QueryRow(ctx, h.acquireSQL, key, owner, h.ttl).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return owner, err
}

func (h *handLease) release(ctx context.Context, key string, owner []byte) error {
	_, err := h.pool.Exec(ctx, h.releaseSQL, key, owner)
	return err
}

// op is one acquisition and release of key.
func (h *handLease) op(key string) error {
	ctx := context.Background()
	owner, err := h.acquire(ctx, key)
	switch {
	case err != nil:
		return err
	case owner == nil:
		return errors.New("hand-written lease: " + key + " is held")
	}
	return h.release(ctx, key, owner)
}

// BenchmarkHandWritten puts the driver beside the hand-written leases
// (handLease) on the same server in the same run, as issue 33 asks,
// alternating them in 100ms windows (drivertest.BenchAlternating): 16
// goroutines on distinct keys, and one goroutine. The contenders:
//
//   - hand: the plain hand-written lease, on a pool of 32 connections;
//   - hand-again: the same on a pool and a table of its own, the control:
//     its ratios to hand are the method's own error;
//   - hand-fenced: the same with a fencing counter, which keeps rows;
//   - ours: lock.Open("postgres", dsn) with pool_max_conns=32;
//   - ours-default: lock.Open("postgres", dsn), the driver's default pool
//     (DefaultMaxConns);
//   - ours-pgx-default: pool_max_conns at pgx's own default, the greater
//     of 4 and the number of CPUs, which the driver's default replaced;
//   - ours-statements: the driver's own acquire and release statements,
//     sent by hand like the hand-written lease's (ourStatements), on a
//     pool of 32 of its own: what the statements cost without the lock
//     package and the driver around them. (On a pool shared with another
//     contender, though they take turns, whichever used it slowed down by
//     a tenth to a sixth at one goroutine.)
//
// Every pool commits with synchronous_commit=on, as the driver's do. The
// figures, and how to compare the contenders with benchstat, are in
// bench/README.md.
func BenchmarkHandWritten(b *testing.B) {
	base := server(b)
	pool := func(size int) *pgxpool.Pool {
		return benchPool(b, drivertest.WithParams(base, "pool_max_conns", strconv.Itoa(size)))
	}
	hand := newHandLease(b, pool(handPool), freshTable(b, base), false)
	again := newHandLease(b, pool(handPool), freshTable(b, base), false)
	fenced := newHandLease(b, pool(handPool), freshTable(b, base), true)
	ours := open(b, drivertest.WithParams(base, "pool_max_conns", strconv.Itoa(handPool), "distlock_table", freshTable(b, base)))
	oursDefault := open(b, drivertest.WithParams(base, "distlock_table", freshTable(b, base)))
	pgxDefault := strconv.Itoa(max(4, runtime.NumCPU()))
	oursPgx := open(b, drivertest.WithParams(base, "pool_max_conns", pgxDefault, "distlock_table", freshTable(b, base)))
	contenders := []drivertest.Contender{
		{Name: "hand", Op: hand.op},
		{Name: "hand-again", Op: again.op},
		{Name: "hand-fenced", Op: fenced.op},
		{Name: "ours", Op: drivertest.AcquireRelease(ours)},
		{Name: "ours-default", Op: drivertest.AcquireRelease(oursDefault)},
		{Name: "ours-pgx-default", Op: drivertest.AcquireRelease(oursPgx)},
		{Name: "ours-statements", Op: ourStatements(b, pool(handPool), base)},
	}
	for _, g := range []int{16, 1} {
		b.Run("goroutines="+strconv.Itoa(g), func(b *testing.B) {
			drivertest.BenchAlternating(b, g, contenders...)
		})
	}
}

// BenchmarkHandWrittenAlone runs one contender of BenchmarkHandWritten at
// a time, 16 goroutines on distinct keys, for a CPU profile of each side
// (go test -bench 'HandWrittenAlone/impl=ours' -cpuprofile ours.prof).
func BenchmarkHandWrittenAlone(b *testing.B) {
	base := server(b)
	pool := func(size int) *pgxpool.Pool {
		return benchPool(b, drivertest.WithParams(base, "pool_max_conns", strconv.Itoa(size)))
	}
	for _, impl := range []string{"hand", "ours", "ours-statements"} {
		b.Run("impl="+impl, func(b *testing.B) {
			var op func(string) error
			switch impl {
			case "hand":
				op = newHandLease(b, pool(handPool), freshTable(b, base), false).op
			case "ours":
				op = drivertest.AcquireRelease(open(b, drivertest.WithParams(base, "pool_max_conns", strconv.Itoa(handPool), "distlock_table", freshTable(b, base))))
			default:
				op = ourStatements(b, pool(handPool), base)
			}
			runParallel(b, 16, op)
		})
	}
}

// ourStatements returns an acquisition and release of a key by the
// driver's own statements, sent through pool as the hand-written lease
// sends its own: a fresh 20-byte random value as the driver's core draws
// (base64, 27 characters), the fence scanned, the release's row count
// checked. The table is created by a client of the driver on dsn.
func ourStatements(b *testing.B, pool *pgxpool.Pool, dsn string) func(key string) error {
	b.Helper()
	table := freshTable(b, dsn)
	if err := drivertest.AcquireRelease(open(b, drivertest.WithParams(dsn, "distlock_table", table, "pool_max_conns", "1")))("create"); err != nil {
		b.Fatal(err)
	}
	acquireSQL, releaseSQL, err := postgres.Statements(table)
	if err != nil {
		b.Fatal(err)
	}
	ttl := pgtype.Interval{Microseconds: lock.DefaultTTL.Microseconds(), Valid: true}
	ctx := context.Background()
	return func(key string) error {
		var raw [20]byte
		rand.Read(raw[:])
		value := base64.RawURLEncoding.EncodeToString(raw[:])
		var fence int64
		err := pool.QueryRow(ctx, acquireSQL, key, value, ttl).Scan(&fence)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return errors.New("the driver's statements: " + key + " is held")
		case err != nil:
			return err
		}
		tag, err := pool.Exec(ctx, releaseSQL, key, value)
		if err == nil && tag.RowsAffected() != 1 {
			err = errors.New("the driver's statements: " + key + " was not held at its release")
		}
		return err
	}
}
