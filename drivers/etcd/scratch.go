package etcd

import (
	"context"
	"fmt"
	"strings"

	"github.com/distlock/lock/driver"
	clientv3 "go.etcd.io/etcd/client/v3"
)

var _ driver.ScratchLister = (*conn)(nil)

// listPage is how many keys one request of ListScratch reads at most (a
// variable for the tests).
var listPage int64 = 1000

// ListScratch returns the key prefixes that begin with prefix, sorted,
// each ending at the first '/' after prefix, which it includes: with
// "distlock-verify/", the key distlock-verify/1a2b/k gives
// "distlock-verify/1a2b/". Keys are absolute, as the prefix parameter is,
// whatever the connection's own prefix; a key with no '/' after prefix is
// under no such prefix, and is left out. It reads keys only, in pages of
// listPage at the revision of the first, and skips the rest of each
// prefix it finds, so a prefix of many keys costs one request. It refuses
// an empty prefix with an error matching driver.ErrMisconfigured.
func (c *conn) ListScratch(ctx context.Context, prefix string) ([]string, error) {
	if prefix == "" {
		return nil, fmt.Errorf("etcd: list scratch prefixes: %w: empty prefix", driver.ErrMisconfigured)
	}
	end := clientv3.GetPrefixRangeEnd(prefix)
	var (
		names []string
		rev   int64 // the revision of the first page, for the others
	)
	from := prefix
	for {
		var kvs []string
		more := false
		err := c.routes.do(ctx, func(ctx context.Context, cli *clientv3.Client) error {
			opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithKeysOnly(), clientv3.WithLimit(listPage),
				clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend)}
			if rev != 0 {
				opts = append(opts, clientv3.WithRev(rev))
			}
			resp, err := cli.Get(ctx, from, opts...)
			if err != nil {
				return err
			}
			if rev == 0 {
				rev = resp.Header.Revision
			}
			kvs = kvs[:0]
			for _, kv := range resp.Kvs {
				kvs = append(kvs, string(kv.Key))
			}
			more = resp.More
			return nil
		})
		if err != nil {
			return nil, wrap(ctx, "list scratch prefixes", err)
		}
		if len(kvs) == 0 {
			return names, nil
		}
		last := kvs[len(kvs)-1]
		for _, k := range kvs {
			if name, ok := scratchName(k, prefix); ok && (len(names) == 0 || names[len(names)-1] != name) {
				names = append(names, name)
			}
		}
		if !more {
			return names, nil
		}
		// Go on after the last key, or past its whole prefix.
		from = last + "\x00"
		if name, ok := scratchName(last, prefix); ok {
			from = clientv3.GetPrefixRangeEnd(name)
		}
	}
}

// scratchName returns the key prefix of key under prefix: key up to the
// first '/' after prefix, included. It reports false for a key without
// one.
func scratchName(key, prefix string) (string, bool) {
	i := strings.IndexByte(key[len(prefix):], '/')
	if i < 0 {
		return "", false
	}
	return key[:len(prefix)+i+1], true
}
