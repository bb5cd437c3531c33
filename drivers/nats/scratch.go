package nats

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/distlock/lock/driver"
)

var _ driver.ScratchLister = (*conn)(nil)

// ListScratch returns the names of the key-value buckets that begin with
// prefix, sorted. JetStream's listing filters by whole subject tokens,
// not by a name's beginning, so it reads every bucket's name and keeps
// those that begin with prefix. It refuses an empty prefix with an error
// matching driver.ErrMisconfigured.
func (c *conn) ListScratch(ctx context.Context, prefix string) ([]string, error) {
	if prefix == "" {
		return nil, fmt.Errorf("nats: list scratch buckets: %w: empty prefix", driver.ErrMisconfigured)
	}
	ctx, done := c.bound(ctx)
	defer done()
	l := c.js.KeyValueStoreNames(ctx)
	var names []string
	for name := range l.Name() { // read to the end, so that the lister's goroutine ends
		if strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
	}
	if err := l.Error(); err != nil {
		return nil, fail(ctx, "list scratch buckets", err)
	}
	slices.Sort(names)
	return names, nil
}
