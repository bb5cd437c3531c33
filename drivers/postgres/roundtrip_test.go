package postgres_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/postgres"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// wire counts what a pool sends: statements (through pgx's tracer),
// statement preparations, and writes to the network.
type wire struct {
	mu       sync.Mutex
	queries  []string
	prepares int
	writes   atomic.Int64
}

func (w *wire) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	w.mu.Lock()
	w.queries = append(w.queries, d.SQL)
	w.mu.Unlock()
	return ctx
}

func (w *wire) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (w *wire) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	w.mu.Lock()
	w.prepares++
	w.mu.Unlock()
	return ctx
}

func (w *wire) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// measure runs op and returns what it sent.
func (w *wire) measure(op func()) (queries []string, prepares int, writes int64) {
	w.mu.Lock()
	w.queries, w.prepares = nil, 0
	w.mu.Unlock()
	w.writes.Store(0)
	op()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.queries, w.prepares, w.writes.Load()
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// tracedPool returns a pool of one connection whose traffic w counts.
func tracedPool(t *testing.T, dsn string, w *wire) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	cfg.ConnConfig.Tracer = w
	dial := cfg.ConnConfig.DialFunc
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: c, writes: &w.writes}, nil
	}
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// TestRoundTrips_oneStatementEach shows that acquire (granted or refused),
// extend, release and inspect each send one statement in one network
// write, once pgx has prepared the statements.
func TestRoundTrips_oneStatementEach(t *testing.T) {
	dsn := server(t)
	var w wire
	connector, err := postgres.New(tracedPool(t, dsn, &w), postgres.Config{Table: freshTable(t, dsn)})
	if err != nil {
		t.Fatal(err)
	}
	c := lock.OpenConnector(connector)
	defer c.Close()
	ctx := ctxFor(t, 30*time.Second)
	const key = "roundtrips"

	var l *lock.Lock
	steps := []struct {
		name string
		op   func() error
	}{
		{"acquire", func() (err error) { l, err = c.TryAcquire(ctx, key); return err }},
		{"acquireHeld", func() error {
			_, err := c.TryAcquire(ctx, key)
			if !errors.Is(err, lock.ErrNotAcquired) {
				return errors.New("TryAcquire of a held key: " + errString(err))
			}
			return nil
		}},
		{"extend", func() error { return l.Extend(ctx, time.Minute) }},
		{"release", func() error { return l.Release(ctx) }},
	}
	// The first round connects and prepares the statements: the counters
	// must see that, or they prove nothing.
	_, prepared, _ := w.measure(func() {
		for _, s := range steps {
			if err := s.op(); err != nil {
				t.Fatalf("warm-up %s: %v", s.name, err)
			}
		}
	})
	if prepared < 3 {
		t.Fatalf("the warm-up prepared %d statements; want at least 3 (is the tracer installed?)", prepared)
	}
	for round := 0; round < 3; round++ {
		for _, s := range steps {
			var err error
			queries, prepares, writes := w.measure(func() { err = s.op() })
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			if len(queries) != 1 || prepares != 0 || writes != 1 {
				t.Errorf("%s sent %d statements (%q), prepared %d, and wrote to the network %d times; want 1 statement, no preparation, 1 write",
					s.name, len(queries), queries, prepares, writes)
			}
		}
	}

	// Inspect, through the driver.
	dc, err := connector.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	in := dc.(driver.Inspector)
	in.Inspect(ctx, key) // prepares
	queries, prepares, writes := w.measure(func() { _, _, err = in.Inspect(ctx, key) })
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	if len(queries) != 1 || prepares != 0 || writes != 1 {
		t.Errorf("inspect sent %d statements (%q), prepared %d, and wrote %d times; want 1, 0, 1", len(queries), queries, prepares, writes)
	}

	// Transfer (a handover to a waiting call of the same client), through
	// the driver.
	tr := dc.(driver.Transferer)
	if _, err := dc.Acquire(ctx, key, "v0", time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Transfer(ctx, key, "v0", "v1", time.Minute); err != nil { // prepares
		t.Fatal(err)
	}
	queries, prepares, writes = w.measure(func() { _, err = tr.Transfer(ctx, key, "v1", "v2", time.Minute) })
	if err != nil {
		t.Fatalf("Transfer: %v", err)
	}
	if len(queries) != 1 || prepares != 0 || writes != 1 {
		t.Errorf("transfer sent %d statements (%q), prepared %d, and wrote %d times; want 1, 0, 1", len(queries), queries, prepares, writes)
	}
	if err := dc.Release(ctx, key, "v2"); err != nil {
		t.Error(err)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
