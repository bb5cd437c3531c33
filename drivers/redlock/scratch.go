package redlock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/distlock/lock/driver"
)

var _ driver.ScratchLister = (*Redlock)(nil)

// listBatch is the COUNT of each SCAN of ListScratch.
const listBatch = 1000

// ListScratch returns the key prefixes that begin with prefix and hold a
// key on some node, sorted, each ending at the first '/' after prefix,
// which it includes: with "distlock-verify/", the lock key
// distlock-verify/1a2b/{k} gives "distlock-verify/1a2b/". Keys are
// absolute, as key_prefix is, whatever the connection's own prefix. A key
// with no '/' after prefix is under no such prefix, and neither is one
// whose '/' comes after a '{', within a lock key's hash tag; both are left
// out. It scans every node with SCAN MATCH (prefix escaped) and COUNT
// listBatch, and returns the union, or an error if a node failed. It
// refuses an empty prefix with an error matching driver.ErrMisconfigured,
// and a [Sharded] node with one matching errors.ErrUnsupported, as
// [Redlock.Drop] does.
func (r *Redlock) ListScratch(ctx context.Context, prefix string) ([]string, error) {
	if prefix == "" {
		return nil, fmt.Errorf("redlock: list scratch prefixes: %w: empty prefix", driver.ErrMisconfigured)
	}
	for _, n := range r.nodes {
		if s, ok := n.(Sharded); ok && s.Sharded() {
			return nil, fmt.Errorf("redlock: list scratch prefixes: node %s spreads keys over servers, which one SCAN does not reach: %w", n, errors.ErrUnsupported)
		}
	}
	found := make([][]string, len(r.nodes))
	errs := make([]error, len(r.nodes))
	var wg sync.WaitGroup
	for i, n := range r.nodes {
		wg.Go(func() {
			names, err := listNode(ctx, n, prefix)
			if err != nil {
				errs[i] = &NodeError{Node: n.String(), Err: err}
			}
			found[i] = names
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("redlock: list scratch prefixes: %w", err)
	}
	names := slices.Concat(found...)
	slices.Sort(names)
	return slices.Compact(names), nil
}

// listNode returns the key prefixes under prefix of n's keys, as
// ListScratch names them, each once, unsorted.
func listNode(ctx context.Context, n Node, prefix string) ([]string, error) {
	match := globEscape(prefix) + "*"
	seen := make(map[string]bool)
	var names []string
	cursor := "0"
	for {
		keys, next, err := scan(ctx, n, cursor, match, listBatch)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if name, ok := scratchName(k, prefix); ok && !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
		if next == "0" {
			return names, nil
		}
		cursor = next
	}
}

// scratchName returns the key prefix of key under prefix: key up to the
// first '/' after prefix, included. It reports false for a key without
// one, or whose first '/' after prefix comes after a '{'.
func scratchName(key, prefix string) (string, bool) {
	if !strings.HasPrefix(key, prefix) {
		return "", false // SCAN's MATCH should have left it out
	}
	rest := key[len(prefix):]
	i := strings.IndexByte(rest, '/')
	if i < 0 || strings.IndexByte(rest[:i], '{') >= 0 {
		return "", false
	}
	return key[:len(prefix)+i+1], true
}
