package postgres_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
	"github.com/jackc/pgx/v5"
)

// TestSchema_concurrentCreators opens clients on a table that does not
// exist yet, all at once: every one of them must connect.
func TestSchema_concurrentCreators(t *testing.T) {
	dsn := server(t)
	full := drivertest.WithParams(dsn, "distlock_table", freshTable(t, dsn))
	ctx := drivertest.Context(t, time.Minute)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		c := open(t, full)
		wg.Go(func() {
			<-start
			errs[i] = c.Ping(ctx)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("client %d: %v", i, err)
		}
	}
}

// TestSchema_leftAlone checks distlock_create_table=false: a missing table
// is reported when connecting, and an existing one is used.
func TestSchema_leftAlone(t *testing.T) {
	dsn := server(t)
	table := freshTable(t, dsn)
	ctx := drivertest.Context(t, time.Minute)
	c := open(t, drivertest.WithParams(dsn, "distlock_table", table, "distlock_create_table", "false"))
	err := c.Ping(ctx)
	if err == nil || !strings.Contains(err.Error(), table) {
		t.Fatalf("Ping with a missing table that the driver must not create = %v, want an error naming the table", err)
	}
	var exists bool
	if err := admin(t, dsn).QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", pgx.Identifier{table}.Sanitize()).Scan(&exists); err != nil || exists {
		t.Fatalf("the table exists (%v, %v): the driver created it", exists, err)
	}

	// Someone else creates it; the same client connects at its next call.
	creator := open(t, drivertest.WithParams(dsn, "distlock_table", table))
	if err := creator.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	l, err := c.TryAcquire(ctx, "left-alone")
	if err != nil {
		t.Fatalf("TryAcquire once the table exists: %v", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestSchema_qualifiedName uses a schema-qualified, mixed-case table name.
func TestSchema_qualifiedName(t *testing.T) {
	dsn := server(t)
	ad := admin(t, dsn)
	ctx := drivertest.Context(t, time.Minute)
	schema := "distlock_test_schema_" + drivertest.RandomHex(4)
	if _, err := ad.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ad.Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	})
	full := drivertest.WithParams(dsn, "distlock_table", schema+".Locks")
	a, b := open(t, full), open(t, full)
	drivertest.ReleaseWakes(t, ctx, a, b, "k", 10*time.Second, "the waiter did not wake: releases on a schema-qualified table are not announced")
	var n int
	if err := ad.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{schema, "Locks"}.Sanitize()).Scan(&n); err != nil || n != 1 {
		t.Errorf("the table %s.\"Locks\" holds %d rows (%v), want 1", schema, n, err)
	}
}
