package drivertest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/memory"
	"github.com/distlock/lock/drivertest"
)

// TestListScratch_catchesBrokenListers runs ListScratch on a backend of
// namespaces kept in memory, with a right lister, which passes, and with
// broken ones, which it must catch.
func TestListScratch_catchesBrokenListers(t *testing.T) {
	right := func(names []string, prefix string) []string {
		var out []string
		for _, n := range names {
			if strings.HasPrefix(n, prefix) {
				out = append(out, n)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		list   func(names []string, prefix string) []string
		caught bool
		notOn  drivertest.ScratchKind // a kind whose names the mistake cannot show on
	}{
		{"right", right, false, 0},
		{"wildcards", func(names []string, prefix string) []string {
			// '_' and '?' taken as any character, as an unescaped LIKE
			// or MATCH pattern does.
			var out []string
			for _, n := range names {
				if len(n) >= len(prefix) && wildMatch(prefix, n[:len(prefix)]) {
					out = append(out, n)
				}
			}
			return out
		}, true, drivertest.ScratchChroot}, // ZooKeeper has no patterns
		{"unanchored", func(names []string, prefix string) []string {
			// The prefix found anywhere in a name (without a chroot's
			// leading '/'), as a regular expression without its '^' does.
			var out []string
			for _, n := range names {
				if strings.Contains(n, strings.TrimPrefix(prefix, "/")) {
					out = append(out, n)
				}
			}
			return out
		}, true, 0},
		{"forgetsOne", func(names []string, prefix string) []string {
			l := right(names, prefix)
			return l[:max(len(l)-1, 0)]
		}, true, 0},
		{"unsorted", func(names []string, prefix string) []string {
			l := right(names, prefix)
			slices.Reverse(l)
			return l
		}, true, 0},
	} {
		for _, kind := range []drivertest.ScratchKind{drivertest.ScratchNamed, drivertest.ScratchKeyPrefix, drivertest.ScratchChroot} {
			if kind == tc.notOn {
				continue
			}
			t.Run(fmt.Sprintf("%s/kind%d", tc.name, kind), func(t *testing.T) {
				b := &scratchBackend{live: make(map[string]bool), list: tc.list}
				rec := &recorder{TB: t}
				drivertest.ListScratch(rec, kind, b.open)
				if caught := len(rec.errors) > 0; caught != tc.caught {
					t.Errorf("ListScratch reported %q; want errors: %t", rec.errors, tc.caught)
				}
			})
		}
	}
}

// TestListScratch_catchesAnEmptyPrefixListed runs ListScratch on a
// lister that lists everything for an empty prefix.
func TestListScratch_catchesAnEmptyPrefixListed(t *testing.T) {
	b := &scratchBackend{live: make(map[string]bool), list: func(names []string, _ string) []string { return names }, emptyOK: true}
	rec := &recorder{TB: t}
	drivertest.ListScratch(rec, drivertest.ScratchNamed, b.open)
	if !strings.Contains(strings.Join(rec.errors, "\n"), `ListScratch("")`) {
		t.Errorf("a lister that takes an empty prefix was not caught; ListScratch reported %q", rec.errors)
	}
}

// wildMatch reports whether s matches pattern, of the same length, where
// '_' and '?' match any character.
func wildMatch(pattern, s string) bool {
	for i := range len(pattern) {
		if pattern[i] != s[i] && pattern[i] != '_' && pattern[i] != '?' {
			return false
		}
	}
	return true
}

// scratchBackend is a fake backend of namespaces, each a memory store
// that exists from its first acquisition until it is dropped.
type scratchBackend struct {
	mu      sync.Mutex
	live    map[string]bool
	list    func(names []string, prefix string) []string // sorted names in, the lister's answer out
	emptyOK bool                                         // an empty prefix is listed, not refused
}

func (b *scratchBackend) open(t testing.TB, ns string) driver.Conn {
	c, err := memory.New().Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return &scratchNS{Conn: c, b: b, ns: ns}
}

// scratchNS is a connection on one namespace of a scratchBackend.
type scratchNS struct {
	driver.Conn
	b  *scratchBackend
	ns string
}

var _ driver.ScratchLister = (*scratchNS)(nil)

func (c *scratchNS) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	c.b.mu.Lock()
	c.b.live[c.ns] = true
	c.b.mu.Unlock()
	return c.Conn.Acquire(ctx, key, value, ttl)
}

func (c *scratchNS) Drop(context.Context) error {
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	delete(c.b.live, c.ns)
	return nil
}

func (c *scratchNS) ListScratch(_ context.Context, prefix string) ([]string, error) {
	if prefix == "" && !c.b.emptyOK {
		return nil, fmt.Errorf("%w: empty prefix", driver.ErrMisconfigured)
	}
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	names := make([]string, 0, len(c.b.live))
	for n := range c.b.live {
		names = append(names, n)
	}
	slices.Sort(names)
	return c.b.list(names, prefix), nil
}
