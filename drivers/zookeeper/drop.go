package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/distlock/lock/driver"
	"github.com/go-zookeeper/zk"
)

var _ driver.Dropper = (*conn)(nil)

// ErrNotScratch is Drop's error for a chroot that is not a scratch chroot
// of its own: the default one, one above it, one under it, or ZooKeeper's
// own /zookeeper. It matches driver.ErrMisconfigured.
var ErrNotScratch = fmt.Errorf("%w: not a scratch chroot", driver.ErrMisconfigured)

// dropTries bounds how often Drop starts its walk of the tree again when
// a node was added under one it was about to delete.
const dropTries = 5

// scratchRoot returns nil if Drop may delete root and everything under
// it, and otherwise why not. A chroot above [DefaultRoot] holds the
// default namespace, and one under it is a key of the default namespace
// ("/distlock/tmp" is the node of the key "tmp").
func scratchRoot(root string) error {
	root = strings.TrimSuffix(root, "/")
	for _, shared := range []string{DefaultRoot, "/zookeeper"} {
		if within(shared, root) || within(root, shared) {
			return fmt.Errorf("%w: chroot %q overlaps %s; name one of its own in the DSN's path", ErrNotScratch, root, shared)
		}
	}
	return nil
}

// within reports whether path is node or lies under it.
func within(path, node string) bool {
	return path == node || strings.HasPrefix(path, node+"/")
}

// Drop deletes the chroot node and everything under it, held locks
// included, one node at a time, leaves first. It refuses with
// [ErrNotScratch] for a chroot that overlaps the default one. The
// chroot's ancestors stay. Tokens are creation zxids, which keep growing
// across a Drop.
func (cn *conn) Drop(ctx context.Context) error {
	if err := scratchRoot(cn.root); err != nil {
		return fmt.Errorf("zookeeper: drop: %w", err)
	}
	caller := ctx
	ctx, cancel := cn.bound(ctx)
	defer cancel()
	var err error
	for range dropTries {
		err = cn.deleteTree(ctx, cn.root)
		if !errors.Is(err, zk.ErrNotEmpty) {
			break
		}
	}
	if err != nil {
		return wrap(caller, "drop", err)
	}
	return nil
}

// deleteTree deletes path's descendants, then path. A node that is gone
// already is no error.
func (cn *conn) deleteTree(ctx context.Context, path string) error {
	kids, err := cn.children(ctx, cn.base, path)
	if err != nil {
		return err
	}
	for _, k := range kids {
		if err := cn.deleteTree(ctx, path+"/"+k); err != nil {
			return err
		}
	}
	_, err = cn.delete(ctx, cn.base, path)
	return err
}
