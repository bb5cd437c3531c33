package etcd_test

import (
	"errors"
	"testing"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/etcd"
	"github.com/distlock/lock/drivertest"
)

// Drop refuses a prefix that overlaps the default one, and deletes
// nothing: the default prefix, a prefix of it, and a prefix under it.
func TestDrop_refusesSharedPrefixes(t *testing.T) {
	ctx := drivertest.Context(t, 30*time.Second)
	probe := "drop-test/" + drivertest.RandomHex(4)
	for _, tc := range []struct{ name, dsn string }{
		{"noPrefix", dsnWithPrefix(t, "")},
		{"defaultNamed", dsnWithPrefix(t, etcd.DefaultPrefix)},
		{"shorter", dsnWithPrefix(t, "distlock")},
		{"under", dsnWithPrefix(t, etcd.DefaultPrefix+"scratch/")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t, tc.dsn)
			if _, err := c.Acquire(ctx, probe, "probe", 10*time.Second); err != nil {
				t.Fatal(err)
			}
			defer c.Release(ctx, probe, "probe")
			err := c.(driver.Dropper).Drop(ctx)
			if !errors.Is(err, etcd.ErrNotScratch) || !errors.Is(err, driver.ErrMisconfigured) {
				t.Errorf("Drop = %v, want an error matching ErrNotScratch and driver.ErrMisconfigured", err)
			}
			if _, held, err := c.(driver.Inspector).Inspect(ctx, probe); err != nil || !held {
				t.Errorf("Inspect after a refused Drop = %v, %v; want the key still held", held, err)
			}
		})
	}
}

// connect opens a raw connection, closed when the test ends.
func connect(t *testing.T, dsn string) driver.Conn {
	t.Helper()
	c := drivertest.Connect(t, etcd.Driver{}, dsn)
	t.Cleanup(func() { c.Close() })
	return c
}
