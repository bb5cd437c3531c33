package zookeeper_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/zookeeper"
	"github.com/distlock/lock/drivertest"
)

// Drop refuses a chroot that overlaps the default one, and deletes
// nothing: no chroot, the default named, and a chroot under it (the node
// of a key of the default namespace).
func TestDrop_refusesSharedChroots(t *testing.T) {
	ctx := drivertest.Context(t, 30*time.Second)
	probe := "drop-test/" + drivertest.RandomHex(4)
	noChroot := "zk://" + strings.Join(servers(t), ",")
	for _, tc := range []struct{ name, dsn string }{
		{"noChroot", noChroot},
		{"defaultNamed", dsnAt(t, zookeeper.DefaultRoot)},
		{"under", dsnAt(t, zookeeper.DefaultRoot+"/tmp")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t, tc.dsn)
			if _, err := c.Acquire(ctx, probe, "probe", 10*time.Second); err != nil {
				t.Fatal(err)
			}
			defer c.Release(ctx, probe, "probe")
			err := c.(driver.Dropper).Drop(ctx)
			if !errors.Is(err, zookeeper.ErrNotScratch) || !errors.Is(err, driver.ErrMisconfigured) {
				t.Errorf("Drop = %v, want an error matching ErrNotScratch and driver.ErrMisconfigured", err)
			}
			if _, held, err := c.(driver.Inspector).Inspect(ctx, probe); err != nil || !held {
				t.Errorf("Inspect after a refused Drop = %v, %v; want the key still held", held, err)
			}
		})
	}
}

// Drop deletes the chroot node itself, held keys and all, and leaves its
// parent.
func TestDrop_deletesTheChroot(t *testing.T) {
	ctx := drivertest.Context(t, 30*time.Second)
	_, root := dsn(t)
	c := connect(t, dsnAt(t, root))
	if _, err := c.Acquire(ctx, "a/b", "holder", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := c.(driver.Dropper).Drop(ctx); err != nil {
		t.Fatalf("Drop: %v", err)
	}
	zc := rawConn(t)
	if ok, _, err := zc.Exists(root); err != nil || ok {
		t.Errorf("Exists(%s) after Drop = %v, %v; want gone", root, ok, err)
	}
	parent := root[:strings.LastIndex(root, "/")]
	if ok, _, err := zc.Exists(parent); err != nil || !ok {
		t.Errorf("Exists(%s) after Drop = %v, %v; want the parent kept", parent, ok, err)
	}
}

// connect opens a raw connection, closed when the test ends.
func connect(t *testing.T, dsn string) driver.Conn {
	t.Helper()
	c := drivertest.Connect(t, zookeeper.Driver{}, dsn)
	t.Cleanup(func() { c.Close() })
	return c
}
