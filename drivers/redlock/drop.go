package redlock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/distlock/lock/driver"
)

var _ driver.Dropper = (*Redlock)(nil)

// ErrNotScratch is Drop's error for a key prefix that is not a scratch
// prefix of its own: the default prefix, a prefix of it (the empty one
// included, which is every key), or one that starts with it. It matches
// driver.ErrMisconfigured.
var ErrNotScratch = fmt.Errorf("%w: not a scratch key prefix", driver.ErrMisconfigured)

// Sharded is implemented by a [Node] whose keys are spread over several
// servers, such as a Redis Cluster client. A SCAN through such a node
// reaches one server, so [Redlock.Drop] refuses it rather than leave keys
// behind.
type Sharded interface {
	// Sharded reports whether the node spreads keys over servers.
	Sharded() bool
}

const (
	// dropBatch is the COUNT of each SCAN of Drop, and so the most keys
	// one UNLINK deletes.
	dropBatch = 500

	// dropCallTimeout bounds each command of Drop, so that a hung node
	// fails it instead of holding it up.
	dropCallTimeout = 5 * time.Second
)

// scratchPrefix returns nil if Drop may delete every key that starts
// with prefix, and otherwise why not.
func scratchPrefix(prefix string) error {
	if strings.HasPrefix(DefaultKeyPrefix, prefix) || strings.HasPrefix(prefix, DefaultKeyPrefix) {
		return fmt.Errorf("%w: key prefix %q overlaps the default %q; name one of its own with key_prefix",
			ErrNotScratch, prefix, DefaultKeyPrefix)
	}
	return nil
}

// Drop deletes every key that starts with the key prefix on every node:
// the locks, held ones included, and the fencing counters. It scans each
// node with SCAN MATCH and deletes what each scan step returns with
// UNLINK (DEL on a server without it). It refuses with [ErrNotScratch]
// for a prefix that overlaps the default one, and with an error matching
// errors.ErrUnsupported for a [Sharded] node. It succeeds only if every
// node did: a node that failed keeps its keys, and its counters have no
// TTL, so call it again. Tokens of a prefix dropped start again from 1.
func (r *Redlock) Drop(ctx context.Context) error {
	if err := scratchPrefix(r.cfg.prefix); err != nil {
		return fmt.Errorf("redlock: drop: %w", err)
	}
	for _, n := range r.nodes {
		if s, ok := n.(Sharded); ok && s.Sharded() {
			return fmt.Errorf("redlock: drop: node %s spreads keys over servers, which one SCAN does not reach: %w", n, errors.ErrUnsupported)
		}
	}
	errs := make([]error, len(r.nodes))
	var wg sync.WaitGroup
	for i, n := range r.nodes {
		wg.Go(func() {
			if err := dropNode(ctx, n, r.cfg.prefix); err != nil {
				errs[i] = &NodeError{Node: n.String(), Err: err}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("redlock: drop: %w", err)
	}
	return nil
}

// dropNode deletes every key of n that starts with prefix.
func dropNode(ctx context.Context, n Node, prefix string) error {
	match := globEscape(prefix) + "*"
	del := "UNLINK"
	cursor := "0"
	for {
		keys, next, err := scan(ctx, n, cursor, match, dropBatch)
		if err != nil {
			return err
		}
		if len(keys) > 0 {
			err := deleteKeys(ctx, n, del, keys)
			if del == "UNLINK" && isUnknownCommand(err) {
				del = "DEL" // Redis before 4.0
				err = deleteKeys(ctx, n, del, keys)
			}
			if err != nil {
				return err
			}
		}
		if next == "0" {
			return nil
		}
		cursor = next
	}
}

// scan makes one step of SCAN, with MATCH match and COUNT count.
func scan(ctx context.Context, n Node, cursor, match string, count int64) (keys []string, next string, err error) {
	ctx, cancel := context.WithTimeout(ctx, dropCallTimeout)
	defer cancel()
	reply, err := n.Do(ctx, []any{"SCAN", cursor, "MATCH", match, "COUNT", count})
	if err != nil {
		return nil, "", err
	}
	parts, ok := reply.([]any)
	if !ok || len(parts) != 2 {
		return nil, "", fmt.Errorf("SCAN replied %T: %w", reply, errNoReply)
	}
	next, ok = parts[0].(string)
	list, ok2 := parts[1].([]any)
	if !ok || !ok2 {
		return nil, "", fmt.Errorf("SCAN replied %T and %T: %w", parts[0], parts[1], errNoReply)
	}
	for _, k := range list {
		s, ok := k.(string)
		if !ok {
			return nil, "", fmt.Errorf("SCAN replied a key of type %T: %w", k, errNoReply)
		}
		keys = append(keys, s)
	}
	return keys, next, nil
}

// deleteKeys deletes keys with the command del.
func deleteKeys(ctx context.Context, n Node, del string, keys []string) error {
	ctx, cancel := context.WithTimeout(ctx, dropCallTimeout)
	defer cancel()
	args := make([]any, 0, len(keys)+1)
	args = append(args, del)
	for _, k := range keys {
		args = append(args, k)
	}
	_, err := n.Do(ctx, args)
	return err
}

// isUnknownCommand reports whether err is Redis's reply to a command it
// does not know.
func isUnknownCommand(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "ERR unknown command")
}

// globEscape escapes the characters that SCAN's MATCH pattern gives a
// meaning, so that the pattern matches prefix as written.
func globEscape(prefix string) string {
	var b strings.Builder
	for _, c := range prefix {
		if strings.ContainsRune(`\*?[]^-`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
