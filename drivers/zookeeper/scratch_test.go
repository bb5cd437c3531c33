package zookeeper_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/zookeeper"
	"github.com/distlock/lock/drivertest"
)

// ListScratch lists the chroots under the root that begin with a prefix,
// and nothing else.
func TestListScratch(t *testing.T) {
	drivertest.ListScratch(t, drivertest.ScratchChroot, func(t testing.TB, ns string) driver.Conn {
		return connectAt(t, ns)
	})
}

// ListScratch lists the children of a deeper node too, from a connection
// on another chroot, and refuses a prefix that is not an absolute path.
func TestListScratch_deeper(t *testing.T) {
	ctx := drivertest.Context(t, 30*time.Second)
	parent := "/dlls-" + drivertest.RandomHex(4)
	other := connectAt(t, "/dlls-"+drivertest.RandomHex(4))
	dropLater(t, other)
	dropLater(t, connectAt(t, parent)) // with everything under it
	var want []string
	for _, ns := range []string{"/x-a", "/x-b", "/y-c"} {
		c := connectAt(t, parent+ns)
		if _, err := c.Acquire(ctx, "k", "v"+drivertest.RandomHex(4), time.Minute); err != nil {
			t.Fatal(err)
		}
		if ns != "/y-c" {
			want = append(want, parent+ns)
		}
	}
	lister := other.(driver.ScratchLister)
	if got, err := lister.ListScratch(ctx, parent+"/x-"); err != nil || !slices.Equal(got, want) {
		t.Errorf("ListScratch(%q) = %q, %v; want %q", parent+"/x-", got, err, want)
	}
	if got, err := lister.ListScratch(ctx, parent+"/nothing/"); err != nil || len(got) != 0 {
		t.Errorf("ListScratch under a node that does not exist = %q, %v; want none", got, err)
	}
	if got, err := lister.ListScratch(ctx, "distlock-verify-"); !errors.Is(err, driver.ErrMisconfigured) {
		t.Errorf("ListScratch of a relative prefix = %q, %v; want an error matching driver.ErrMisconfigured", got, err)
	}
}

// dropLater drops c's chroot when the test ends.
func dropLater(t *testing.T, c driver.Conn) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.(driver.Dropper).Drop(ctx); err != nil {
			t.Errorf("Drop: %v", err)
		}
	})
}

// connectAt opens a raw connection on the chroot root, closed when the
// test ends.
func connectAt(t testing.TB, root string) driver.Conn {
	t.Helper()
	c := drivertest.Connect(t, zookeeper.Driver{}, dsnAt(t, root))
	t.Cleanup(func() { c.Close() })
	return c
}
