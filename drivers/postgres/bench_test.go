package postgres_test

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/postgres"
	"github.com/distlock/lock/drivertest"
	"github.com/distlock/lock/internal/latency"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The benchmarks compare the driver, through the lock package, with what
// a program could write by hand on the same server in the same run:
//
//   - BenchmarkAcquireRelease: one uncontended acquisition and release,
//     against baselineLease, a hand-written one-statement lease lock
//     (INSERT ... ON CONFLICT ... WHERE expired to take, DELETE to give
//     back). Reports the latency's p50 and p99. Its paired sub-benchmark
//     runs both over one connection, alternating call by call, so that
//     both meet the same server process and the same load from the rest of
//     a shared machine, and reports both p50s and their ratio: that ratio
//     is the figure to judge the driver's overhead by. (Latencies here
//     switch between modes, 45µs and 170µs for the same baseline, with
//     the scheduling of the two processes; runs on separate connections, or
//     in blocks, can land in different modes and compare nothing.)
//   - BenchmarkAcquireRelease_parallel: the same from 16 goroutines on
//     distinct keys; its paired sub-benchmark alternates the two in 100ms
//     windows and reports both rates and their ratio, the figure to judge
//     the driver's throughput by.
//   - BenchmarkHandoff: 8 goroutines taking turns on one key, each holding
//     it for 1ms, through one client or through 8 (one each), against
//     PostgreSQL's own blocking pg_advisory_lock on 8 connections. The
//     driver's waiters poll only once a minute, so any waiter that depended
//     on polling would stall the benchmark for half a minute: wake-ups do
//     all the work. Reports acquisitions and handoffs (acquisitions by
//     another goroutine than the last) per second, and the wait's p50, p99
//     and maximum.
//
// Every pool here asks for synchronous_commit=on, which the driver sets on
// its own connections, so that the baselines commit as durably.

// benchPool returns a pool on dsn like the driver's: synchronous_commit on.
func benchPool(b *testing.B, dsn string) *pgxpool.Pool {
	b.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		b.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "on"
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	return pool
}

// baselineLease is a hand-written lease lock: one statement to take a key,
// one to give it back, no fencing, no notification.
type baselineLease struct {
	pool                   *pgxpool.Pool
	acquireSQL, releaseSQL string
	values                 atomic.Int64
	ttl                    time.Duration
}

func newBaselineLease(b *testing.B, pool *pgxpool.Pool, table string) *baselineLease {
	b.Helper()
	t := pgx.Identifier{table}.Sanitize()
	if _, err := pool.Exec(context.Background(), `CREATE TABLE `+t+` (
	key text COLLATE "C" PRIMARY KEY,
	value text NOT NULL,
	expires_at timestamptz NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	return &baselineLease{
		pool: pool,
		acquireSQL: `INSERT INTO ` + t + ` AS l (key, value, expires_at) VALUES ($1, $2, now() + $3::interval)
ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at
WHERE l.expires_at <= now() RETURNING true`,
		releaseSQL: `DELETE FROM ` + t + ` WHERE key = $1 AND value = $2`,
		ttl:        lock.DefaultTTL,
	}
}

// acquire takes key, returning the value to release it with, or "" if it
// is held.
func (bl *baselineLease) acquire(ctx context.Context, key string) (string, error) {
	value := strconv.FormatInt(bl.values.Add(1), 10)
	var ok bool
	err := bl.pool.QueryRow(ctx, bl.acquireSQL, key, value, bl.ttl).Scan(&ok)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return value, err
}

func (bl *baselineLease) release(ctx context.Context, key, value string) error {
	_, err := bl.pool.Exec(ctx, bl.releaseSQL, key, value)
	return err
}

func BenchmarkAcquireRelease(b *testing.B) {
	dsn := server(b)
	c := open(b, drivertest.WithParams(dsn, "distlock_table", freshTable(b, dsn)))
	bl := newBaselineLease(b, benchPool(b, dsn), freshTable(b, dsn))
	ctx := context.Background()
	driverOp := func(b *testing.B) {
		l, err := c.TryAcquire(ctx, "bench")
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
	baselineOp := func(b *testing.B) {
		v, err := bl.acquire(ctx, "bench")
		if err != nil || v == "" {
			b.Fatalf("baseline acquire: %q, %v", v, err)
		}
		if err := bl.release(ctx, "bench", v); err != nil {
			b.Fatal(err)
		}
	}
	// Connect, create the tables, prepare the statements.
	driverOp(b)
	baselineOp(b)

	for _, bench := range []struct {
		name string
		op   func(*testing.B)
	}{{"driver", driverOp}, {"baseline", baselineOp}} {
		b.Run(bench.name, func(b *testing.B) {
			var lat latency.Recorder
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				bench.op(b)
				lat.Add(time.Since(start))
			}
			latency.Report(b, "", "µs", &lat)
		})
	}

	// paired runs the two over one connection, alternating call by call,
	// so that both meet the same server process, the same socket and the
	// same load from the rest of the machine, and reports both p50s and
	// their ratio.
	b.Run("paired", func(b *testing.B) {
		pool := benchPool(b, drivertest.WithParams(dsn, "pool_max_conns", "1"))
		connector, err := postgres.New(pool, postgres.Config{Table: freshTable(b, dsn)})
		if err != nil {
			b.Fatal(err)
		}
		c := lock.OpenConnector(connector)
		defer c.Close()
		bl := newBaselineLease(b, pool, freshTable(b, dsn))
		ops := [2]func(*testing.B){
			func(b *testing.B) {
				l, err := c.TryAcquire(ctx, "bench")
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Release(ctx); err != nil {
					b.Fatal(err)
				}
			},
			func(b *testing.B) {
				v, err := bl.acquire(ctx, "bench")
				if err != nil || v == "" {
					b.Fatalf("baseline acquire: %q, %v", v, err)
				}
				if err := bl.release(ctx, "bench", v); err != nil {
					b.Fatal(err)
				}
			},
		}
		ops[0](b)
		ops[1](b)
		drivertest.BenchPaired(b, ops[0], ops[1])
	})
}

func BenchmarkAcquireRelease_parallel(b *testing.B) {
	const goroutines = 16
	base := server(b)
	dsn := drivertest.WithParams(base, "pool_max_conns", strconv.Itoa(goroutines))
	c := open(b, drivertest.WithParams(dsn, "distlock_table", freshTable(b, base)))
	bl := newBaselineLease(b, benchPool(b, dsn), freshTable(b, base))
	ctx := context.Background()

	driverOp := drivertest.AcquireRelease(c)
	baselineOp := func(key string) error {
		v, err := bl.acquire(ctx, key)
		if err != nil {
			return err
		}
		return bl.release(ctx, key, v)
	}
	b.Run("driver", func(b *testing.B) { runParallel(b, goroutines, driverOp) })
	b.Run("baseline", func(b *testing.B) { runParallel(b, goroutines, baselineOp) })
	// paired alternates the two in 100ms windows, so that both meet the
	// same load and the same state of the server (checkpoints, autovacuum):
	// run in blocks of their own, the two rates moved by 2x here.
	b.Run("paired", func(b *testing.B) {
		drivertest.BenchParallelPaired(b, goroutines, driverOp, baselineOp)
	})
}

// runParallel runs op from goroutines goroutines, each on a key of its
// own, for b.N operations in all.
func runParallel(b *testing.B, goroutines int, op func(key string) error) {
	var n atomic.Int64
	// RunParallel runs parallelism*GOMAXPROCS goroutines.
	b.SetParallelism(max(1, goroutines/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		key := "bench/" + strconv.FormatInt(n.Add(1), 10)
		for pb.Next() {
			if err := op(key); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkHandoff(b *testing.B) {
	const (
		goroutines = 8
		hold       = time.Millisecond
	)
	base := server(b)
	dsn := drivertest.WithParams(base, "pool_max_conns", strconv.Itoa(goroutines))
	table := freshTable(b, base)
	full := drivertest.WithParams(dsn, "distlock_table", table)
	// Waiters poll once a minute: only wake-ups can keep the rate up.
	poll := lock.WithRetry(lock.FixedDelay(time.Minute))

	for _, nclients := range []int{1, goroutines} {
		clients := make([]*lock.Client, nclients)
		for i := range clients {
			clients[i] = open(b, full)
		}
		b.Run("driver/clients="+strconv.Itoa(nclients), func(b *testing.B) {
			key := "handoff/" + drivertest.RandomHex(4)
			var before lock.Stats
			for _, c := range clients {
				before = addStats(before, c.Stats())
			}
			latency.Handoff(b, goroutines, hold, func(ctx context.Context, g int) (func() error, error) {
				l, err := clients[g%nclients].Acquire(ctx, key, poll)
				if err != nil {
					return nil, err
				}
				return func() error { return l.Release(ctx) }, nil
			})
			var after lock.Stats
			for _, c := range clients {
				after = addStats(after, c.Stats())
			}
			acquired := after.Acquired - before.Acquired
			b.ReportMetric(float64(after.Contended-before.Contended)/float64(acquired), "refused/acq")
		})
	}

	b.Run("pg_advisory_lock", func(b *testing.B) {
		pool := benchPool(b, dsn)
		conns := make([]*pgxpool.Conn, goroutines)
		for i := range conns {
			c, err := pool.Acquire(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Release()
			conns[i] = c
		}
		const id = 4242
		latency.Handoff(b, goroutines, hold, func(ctx context.Context, g int) (func() error, error) {
			if _, err := conns[g].Exec(ctx, "SELECT pg_advisory_lock($1)", id); err != nil {
				return nil, err
			}
			return func() error {
				_, err := conns[g].Exec(ctx, "SELECT pg_advisory_unlock($1)", id)
				return err
			}, nil
		})
	})
}

func addStats(a, b lock.Stats) lock.Stats {
	a.Acquired += b.Acquired
	a.Contended += b.Contended
	return a
}
