package postgres_test

import (
	"testing"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/postgres"
	"github.com/distlock/lock/drivertest"
)

func TestInspect(t *testing.T) {
	dsn := server(t)
	dc := drivertest.Connect(t, postgres.Driver{}, drivertest.WithParams(dsn, "distlock_table", freshTable(t, dsn)))
	defer dc.Close()
	in := dc.(driver.Inspector)
	ctx := drivertest.Context(t, time.Minute)

	if _, held, err := in.Inspect(ctx, "inspect/never"); err != nil || held {
		t.Errorf("Inspect of a key never used = held %v, %v; want not held", held, err)
	}
	lease, err := dc.Acquire(ctx, "inspect/k", "holder-1", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	h, held, err := in.Inspect(ctx, "inspect/k")
	if err != nil || !held {
		t.Fatalf("Inspect of a held key = held %v, %v", held, err)
	}
	if h.Value != "holder-1" || h.Lease != lease || h.TTL <= 9*time.Second || h.TTL > 10*time.Second {
		t.Errorf("Inspect = %+v, want value holder-1, lease %+v, TTL in (9s, 10s]", h, lease)
	}
	if err := dc.Release(ctx, "inspect/k", "holder-1"); err != nil {
		t.Fatal(err)
	}
	if _, held, err := in.Inspect(ctx, "inspect/k"); err != nil || held {
		t.Errorf("Inspect of a released key = held %v, %v; want not held", held, err)
	}
	// A key that is only waited for has a row, but no holder.
	w, err := dc.(driver.Waiter).Watch(ctx, "inspect/watched")
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, held, err := in.Inspect(ctx, "inspect/watched"); err != nil || held {
		t.Errorf("Inspect of a key only waited for = held %v, %v; want not held", held, err)
	}
	lease, err = dc.Acquire(ctx, "inspect/watched", "holder-2", time.Second)
	if err != nil || lease.Token != 1 {
		t.Errorf("first Acquire of a key only waited for = %+v, %v; want token 1", lease, err)
	}
}
