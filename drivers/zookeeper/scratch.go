package zookeeper

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/distlock/lock/driver"
)

var _ driver.ScratchLister = (*conn)(nil)

// ListScratch returns the chroots that begin with prefix, an absolute
// path, sorted: the children of the node prefix ends in, or of the root,
// whose paths begin with prefix, each as an absolute path, as the DSN's
// path names it. With "/distlock-verify-" it lists the root's children
// distlock-verify-*, as "/distlock-verify-1a2b". Paths are absolute
// whatever the connection's own chroot: a connection on
// /distlock-verify-1a2b finds its siblings with the prefix
// "/distlock-verify-", or "/" for all of them. Nodes the DSN cannot give
// as a chroot (/zookeeper) are left out, and a parent that does not exist
// has none. It refuses an empty prefix, and one that is not absolute,
// with an error matching driver.ErrMisconfigured.
func (cn *conn) ListScratch(ctx context.Context, prefix string) ([]string, error) {
	if !strings.HasPrefix(prefix, "/") {
		return nil, fmt.Errorf("zookeeper: list scratch chroots: %w: the prefix %q is not an absolute path", driver.ErrMisconfigured, prefix)
	}
	parent := prefix[:strings.LastIndexByte(prefix, '/')+1] // "/" or "/a/b/"
	node := parent
	if node != "/" {
		node = strings.TrimSuffix(node, "/")
	}
	caller := ctx
	ctx, cancel := cn.bound(ctx)
	defer cancel()
	kids, err := cn.children(ctx, cn.base, node)
	if err != nil {
		return nil, wrap(caller, "list scratch chroots", err)
	}
	var names []string
	for _, k := range kids {
		if p := parent + k; strings.HasPrefix(p, prefix) && validRoot(p) == nil {
			names = append(names, p)
		}
	}
	slices.Sort(names)
	return names, nil
}
