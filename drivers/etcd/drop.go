package etcd

import (
	"context"
	"fmt"
	"strings"

	"github.com/distlock/lock/driver"
	clientv3 "go.etcd.io/etcd/client/v3"
)

var _ driver.Dropper = (*conn)(nil)

// ErrNotScratch is Drop's error for a prefix that is not a scratch prefix
// of its own: one that holds the default prefix's keys, or lies under it.
// It matches driver.ErrMisconfigured.
var ErrNotScratch = fmt.Errorf("%w: not a scratch prefix", driver.ErrMisconfigured)

// scratchPrefix returns nil if Drop may delete every key under prefix,
// and otherwise why not. A prefix of [DefaultPrefix] ("", "distlock")
// would delete the default namespace's keys with its own, and a prefix
// under it ("distlock/tmp/") the default namespace's keys that start
// with the rest.
func scratchPrefix(prefix string) error {
	if strings.HasPrefix(DefaultPrefix, prefix) || strings.HasPrefix(prefix, DefaultPrefix) {
		return fmt.Errorf("%w: prefix %q overlaps the default prefix %q; name one of its own with the prefix parameter",
			ErrNotScratch, prefix, DefaultPrefix)
	}
	return nil
}

// Drop deletes every key under the connection's prefix, in one request,
// held locks included; their leases expire by their TTL. It refuses with
// [ErrNotScratch] for a prefix that overlaps the default one. Tokens are
// create revisions, which grow across a Drop.
func (c *conn) Drop(ctx context.Context) error {
	if err := scratchPrefix(c.prefix); err != nil {
		return fmt.Errorf("etcd: drop: %w", err)
	}
	err := c.routes.do(ctx, func(ctx context.Context, cli *clientv3.Client) error {
		_, err := cli.Delete(ctx, c.prefix, clientv3.WithPrefix())
		return err
	})
	if err != nil {
		return wrap(ctx, "drop", err)
	}
	return nil
}
