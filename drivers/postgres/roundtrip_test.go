package postgres_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/postgres"
	"github.com/distlock/lock/drivertest"
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
	ctx := drivertest.Context(t, 30*time.Second)
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
	// The first two rounds connect and prepare the statements (the second
	// acquisition, following a refusal, is the guarded one): the counters
	// must see that, or they prove nothing.
	_, prepared, _ := w.measure(func() {
		for range 2 {
			for _, s := range steps {
				if err := s.op(); err != nil {
					t.Fatalf("warm-up %s: %v", s.name, err)
				}
			}
		}
	})
	if prepared < 4 {
		t.Fatalf("the warm-up prepared %d statements; want at least 4 (is the tracer installed?)", prepared)
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

// TestAcquire_guardedAfterRefusal shows how a connection picks its acquire
// statement: the plain one, which locks the row even when it refuses, for
// a key it has not found held; the guarded one, which turns a refusal away
// without writing, for a key whose last attempt it refused, until an
// attempt succeeds.
func TestAcquire_guardedAfterRefusal(t *testing.T) {
	dsn := server(t)
	table := freshTable(t, dsn)
	holder := open(t, drivertest.WithParams(dsn, "distlock_table", table))
	var w wire
	connector, err := postgres.New(tracedPool(t, dsn, &w), postgres.Config{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	c := lock.OpenConnector(connector)
	defer c.Close()
	db := admin(t, dsn)
	ctx := drivertest.Context(t, 30*time.Second)
	const key = "guarded"

	// xmax is the ID of the last transaction to lock or update the row: a
	// refusal that locked the row changes it.
	xmax := func() string {
		t.Helper()
		var x string
		if err := db.QueryRow(ctx, "SELECT xmax::text FROM "+pgx.Identifier{table}.Sanitize()+" WHERE key = $1", key).Scan(&x); err != nil {
			t.Fatal(err)
		}
		return x
	}
	// attempt makes one TryAcquire, checks its outcome, and reports whether
	// its statement was the guarded one.
	attempt := func(wantHeld bool) (guarded bool, l *lock.Lock) {
		t.Helper()
		var err error
		queries, _, _ := w.measure(func() { l, err = c.TryAcquire(ctx, key) })
		if held := errors.Is(err, lock.ErrNotAcquired); held != wantHeld || (!held && err != nil) {
			t.Fatalf("TryAcquire: %v; want held=%v", err, wantHeld)
		}
		if len(queries) == 0 {
			t.Fatal("TryAcquire sent no statement (is the tracer installed?)")
		}
		// The first call also connects and looks for the table.
		return strings.Contains(queries[len(queries)-1], "NOT EXISTS"), l
	}

	hl, err := holder.TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	before := xmax()
	if guarded, _ := attempt(true); guarded {
		t.Error("the first attempt on a key was guarded; want the plain statement")
	}
	locked := xmax()
	if locked == before {
		t.Errorf("a plain refusal left xmax at %s: the test cannot tell a guarded refusal from it", before)
	}
	for range 3 {
		if guarded, _ := attempt(true); !guarded {
			t.Error("an attempt after a refusal was not guarded")
		}
	}
	if x := xmax(); x != locked {
		t.Errorf("guarded refusals changed the row's xmax from %s to %s: they locked it", locked, x)
	}
	if err := hl.Release(ctx); err != nil {
		t.Fatal(err)
	}
	guarded, l := attempt(false)
	if !guarded {
		t.Error("the attempt after a refusal that took the key was not guarded")
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	guarded, l = attempt(false)
	if guarded {
		t.Error("an attempt after a success was guarded; want the plain statement")
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
