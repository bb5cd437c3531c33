package drivertest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/distlock/lock/driver"
)

// ScratchKind is the form of a driver's scratch namespace names, as
// [driver.ScratchLister] returns them: it tells [ListScratch] which names
// to make.
type ScratchKind int

const (
	// ScratchNamed is a table, a collection or a bucket, named by letters,
	// digits and '_': "dlls_1a2b_a", listed with the prefix "dlls_1a2b_".
	ScratchNamed ScratchKind = iota + 1

	// ScratchKeyPrefix is a key prefix that ends in '/': "dlls/1a2b?/a/",
	// listed with the prefix "dlls/1a2b?/".
	ScratchKeyPrefix

	// ScratchChroot is a chroot, a node under the root: "/dlls-1a2b-a",
	// listed with the prefix "/dlls-1a2b-".
	ScratchChroot
)

// scratchNames are the namespaces of one ListScratch check.
type scratchNames struct {
	prefix    string    // what to list with
	in        [2]string // two namespaces that begin with prefix, sorted
	outsiders []string  // namespaces that do not, each a likely mistake
}

// names returns the namespaces of kind k for the random stem. Each
// outsider is what a lister lists by mistake: one with the prefix's last
// separator in place of a pattern's wildcard ('_' in SQL's LIKE, '?' in
// Redis's MATCH), and one with the prefix inside, not at the start.
func (k ScratchKind) names(stem string) (scratchNames, bool) {
	var n scratchNames
	switch k {
	case ScratchNamed:
		n.prefix = "dlls_" + stem + "_"
		n.in = [2]string{n.prefix + "a", n.prefix + "b"}
		n.outsiders = []string{"dlls_" + stem + "xc", "x" + n.prefix + "d"}
	case ScratchKeyPrefix:
		n.prefix = "dlls/" + stem + "?/"
		n.in = [2]string{n.prefix + "a/", n.prefix + "b/"}
		n.outsiders = []string{"dlls/" + stem + "x/c/", "x" + n.prefix + "d/"}
	case ScratchChroot:
		n.prefix = "/dlls-" + stem + "-"
		n.in = [2]string{n.prefix + "a", n.prefix + "b"}
		n.outsiders = []string{"/dlls-" + stem + "xc", "/x" + n.prefix[1:] + "d"}
	default:
		return n, false
	}
	return n, true
}

// scratchTimeout bounds each call of a ListScratch check, and the Drop
// of each namespace at its end.
const scratchTimeout = 30 * time.Second

// ListScratch checks a driver's [driver.ScratchLister] on the real
// backend. open opens a connection on the namespace ns (a name of kind,
// as ListScratch returns it); ListScratch closes it. It opens two
// namespaces with a random common prefix, and outsiders without it, and
// acquires a key in each, so that key prefixes exist. Listing with the
// prefix must return exactly the two, sorted, from either connection.
// After one is dropped, the list must shrink to the other, from the
// dropped connection too. An empty prefix must be refused with an error
// matching driver.ErrMisconfigured. Every namespace is dropped when the
// test ends.
func ListScratch(t testing.TB, kind ScratchKind, open func(t testing.TB, ns string) driver.Conn) {
	t.Helper()
	n, ok := kind.names(RandomHex(4))
	if !ok {
		t.Fatalf("ListScratch: unknown kind %d", kind)
	}
	ctx := Context(t, 4*scratchTimeout)
	conns := make(map[string]driver.Conn)
	for _, ns := range append(n.in[:], n.outsiders...) {
		conns[ns] = scratchConn(t, ctx, open, ns)
	}
	a, b := conns[n.in[0]], conns[n.in[1]]
	lister, ok := a.(driver.ScratchLister)
	if !ok {
		t.Fatalf("ListScratch: %T is no driver.ScratchLister", a)
	}
	list := func(from driver.Conn, when string, want ...string) {
		t.Helper()
		if when != "" {
			when = " " + when
		}
		ctx, cancel := context.WithTimeout(ctx, scratchTimeout)
		defer cancel()
		got, err := from.(driver.ScratchLister).ListScratch(ctx, n.prefix)
		if err != nil {
			t.Errorf("ListScratch(%q)%s: %v", n.prefix, when, err)
			return
		}
		if !slices.Equal(got, want) {
			t.Errorf("ListScratch(%q)%s = %q, want %q", n.prefix, when, got, want)
		}
	}
	list(a, "", n.in[:]...)
	list(b, "from the other namespace's connection", n.in[:]...)

	dctx, cancel := context.WithTimeout(ctx, scratchTimeout)
	err := a.(driver.Dropper).Drop(dctx)
	cancel()
	if err != nil {
		t.Fatalf("Drop of %s: %v", n.in[0], err)
	}
	list(a, "from the connection whose namespace was dropped", n.in[1])
	list(b, "after the other namespace was dropped", n.in[1])

	if got, err := lister.ListScratch(ctx, ""); !errors.Is(err, driver.ErrMisconfigured) {
		t.Errorf(`ListScratch("") = %q, %v; want an error matching driver.ErrMisconfigured`, got, err)
	}
}

// scratchConn opens a connection on the namespace ns, acquires a key in
// it, and drops the namespace and closes the connection when the test
// ends. The key has a '/' in it, so that a key prefix's name must end at
// the first one after the prefix.
func scratchConn(t testing.TB, ctx context.Context, open func(t testing.TB, ns string) driver.Conn, ns string) driver.Conn {
	t.Helper()
	c := open(t, ns)
	if c == nil {
		t.Fatalf("ListScratch: open(%q) returned nil", ns)
	}
	t.Cleanup(func() { c.Close() })
	d, ok := c.(driver.Dropper)
	if !ok {
		t.Fatalf("ListScratch: %T is no driver.Dropper", c)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), scratchTimeout)
		defer cancel()
		if err := d.Drop(ctx); err != nil {
			t.Errorf("Drop of %s at the end of the test: %v", ns, err)
		}
	})
	actx, cancel := context.WithTimeout(ctx, scratchTimeout)
	defer cancel()
	if _, err := c.Acquire(actx, "dlls/key", "dlls-"+RandomHex(8), time.Minute); err != nil {
		t.Fatalf("Acquire in %s: %v", ns, err)
	}
	return c
}
