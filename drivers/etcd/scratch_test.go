package etcd_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/etcd"
	"github.com/distlock/lock/drivertest"
)

// ListScratch lists the key prefixes that begin with a prefix, and
// nothing else.
func TestListScratch(t *testing.T) {
	drivertest.ListScratch(t, drivertest.ScratchKeyPrefix, func(t testing.TB, ns string) driver.Conn {
		c := drivertest.Connect(t, etcd.Driver{}, dsnWithPrefix(t, ns))
		t.Cleanup(func() { c.Close() })
		return c
	})
}

// ListScratch reads keys in pages, skipping the rest of each key prefix
// it finds, and leaves out a key with no '/' after the prefix.
func TestListScratch_pages(t *testing.T) {
	etcd.SetListPageForTest(t, 2)
	ctx := drivertest.Context(t, 30*time.Second)
	prefix := "dlls/" + drivertest.RandomHex(4) + "/"
	var want []string
	for _, ns := range []string{"a/", "b/", "c/", "d/"} {
		c := connectDropped(t, prefix+ns)
		for i := range 3 {
			if _, err := c.Acquire(ctx, "k"+strconv.Itoa(i), "v"+strconv.Itoa(i), time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		want = append(want, prefix+ns)
	}
	loose := connectDropped(t, prefix)
	if _, err := loose.Acquire(ctx, "loose", "v", time.Minute); err != nil {
		t.Fatal(err)
	}
	got, err := loose.(driver.ScratchLister).ListScratch(ctx, prefix)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("ListScratch(%q) = %q, %v; want %q", prefix, got, err, want)
	}
}

// connectDropped opens a raw connection on prefix, and drops the prefix
// and closes the connection when the test ends.
func connectDropped(t *testing.T, prefix string) driver.Conn {
	t.Helper()
	c := drivertest.Connect(t, etcd.Driver{}, dsnWithPrefix(t, prefix))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.(driver.Dropper).Drop(ctx); err != nil {
			t.Errorf("Drop of %s: %v", prefix, err)
		}
		c.Close()
	})
	return c
}
