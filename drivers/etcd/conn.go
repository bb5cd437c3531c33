package etcd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distlock/lock/driver"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// conn is one lock.Client's connection: its routes to the cluster, its
// pool of leases and, once it first waits, its watcher.
type conn struct {
	prefix  string
	routes  *routes
	leases  *leasePool
	watcher *watcher
	closeFn func() error // closes what the connection made (the watch client)

	seq    atomic.Uint64 // orders the versions of the values this connection writes
	failed failedValues

	ctx     context.Context // ends at Close; bounds the undoing of failed acquisitions
	stop    context.CancelFunc
	undoMu  sync.Mutex // orders undo's start of an undoing before Close's wait
	undos   int        // undoings under way; guarded by undoMu
	undoing sync.WaitGroup

	closeOnce sync.Once
}

var (
	_ driver.Conn      = (*conn)(nil)
	_ driver.Extender  = (*conn)(nil)
	_ driver.Waiter    = (*conn)(nil)
	_ driver.Pinger    = (*conn)(nil)
	_ driver.Inspector = (*conn)(nil)
)

func newConn(prefix string, rs *routes, watchClient func(context.Context) (*clientv3.Client, error), closeFn func() error) *conn {
	c := &conn{prefix: prefix, routes: rs, closeFn: closeFn}
	c.ctx, c.stop = context.WithCancel(context.Background())
	c.leases = newLeasePool(c.grant)
	c.watcher = newWatcher(watchClient)
	return c
}

// grant asks the cluster for a lease of secs seconds.
func (c *conn) grant(ctx context.Context, secs int64) (lease, error) {
	var l lease
	err := c.routes.do(ctx, func(ctx context.Context, cli *clientv3.Client) error {
		sent := time.Now()
		resp, err := cli.Grant(ctx, secs)
		if err != nil {
			return err
		}
		l = lease{id: resp.ID, ends: sent.Add(time.Duration(resp.TTL) * time.Second)}
		return nil
	})
	return l, err
}

// The value stored in a key is the holder's value, a space, the version
// (16 hex digits, greater with each write of this connection) and the TTL
// asked for, in milliseconds: "<value> <version> <ttl>". Values have no
// spaces (the core gives letters, digits, '-' and '_'), so every version
// stored for a value, and nothing else, sorts strictly between value+" "
// and value+"!", and a later version of it sorts after an earlier one:
// the guards below compare values as strings.
func (c *conn) stored(value string, ttl time.Duration) string {
	return value + " " + fmt.Sprintf("%016x", c.seq.Add(1)) + " " + strconv.FormatInt(ttl.Milliseconds(), 10)
}

// parseStored splits a stored value into the holder's value and the TTL
// it asked for.
func parseStored(s string) (value string, ttl time.Duration, ok bool) {
	value, rest, ok := strings.Cut(s, " ")
	_, ms, ok2 := strings.Cut(rest, " ")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || !ok2 || err != nil {
		return s, 0, false
	}
	return value, time.Duration(n) * time.Millisecond, true
}

// ownedBy is the guard "key holds a version of value".
func ownedBy(key, value string) []clientv3.Cmp {
	return []clientv3.Cmp{
		clientv3.Compare(clientv3.Value(key), ">", value+" "),
		clientv3.Compare(clientv3.Value(key), "<", value+"!"),
	}
}

// Acquire puts key under a lease that serves ttl, in one transaction that
// succeeds only if the key does not exist. The token is the key's create
// revision: the cluster's revision at the grant. An attempt that failed
// but may have been applied is undone in the background (see undo).
func (c *conn) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	l, err := c.leases.get(ctx, ttl)
	if err != nil {
		c.failed.add(value) // nothing was written: Release need not ask
		return driver.Lease{}, wrap(ctx, "acquire: lease grant", err)
	}
	k, v := c.prefix+key, c.stored(value, ttl)
	var token int64
	err = c.routes.do(ctx, func(ctx context.Context, cli *clientv3.Client) error {
		resp, err := cli.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(k), "=", 0)).
			Then(clientv3.OpPut(k, v, clientv3.WithLease(l.id))).
			Else(clientv3.OpGet(k)).
			Commit()
		switch {
		case err != nil:
			return err
		case resp.Succeeded:
			token = resp.Header.Revision
			return nil
		}
		// An earlier attempt of this call may have been applied after
		// its member stopped answering: the key is then ours.
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) == 1 && string(kvs[0].Value) == v {
			token = kvs[0].CreateRevision
			return nil
		}
		return driver.ErrHeld
	})
	switch {
	case err == nil:
		return driver.Lease{Token: uint64(token), Fenced: true}, nil
	case errors.Is(err, driver.ErrHeld):
		return driver.Lease{}, err
	case errors.Is(err, rpctypes.ErrLeaseNotFound):
		c.leases.drop(l)
		c.failed.add(value)
	case refused(err):
		c.failed.add(value)
	default:
		c.undo(k, value, l)
	}
	return driver.Lease{}, wrap(ctx, "acquire", err)
}

// undoLimit bounds the undoings under way; past it, a key that a failed
// acquisition may have set is left to its lease.
const undoLimit = 1024

// undoRetry is the pause between an undoing's tries.
const undoRetry = 250 * time.Millisecond

// undo deletes k in the background if a version of value is in it: the
// acquisition of value failed, but may have been applied (its member
// stopped answering, or the caller's context ended, after it was sent).
// It tries again until the key's lease l has ended (the cluster then
// deleted the key) or the connection closes. Meanwhile, Release of value
// returns at once, so that the core's cleanup after the failure does not
// outlast the caller's deadline on a cluster that does not answer.
func (c *conn) undo(k, value string, l lease) {
	c.failed.add(value)
	c.undoMu.Lock()
	defer c.undoMu.Unlock()
	if c.ctx.Err() != nil || c.undos >= undoLimit {
		return
	}
	c.undos++
	c.undoing.Go(func() {
		defer func() {
			c.undoMu.Lock()
			c.undos--
			c.undoMu.Unlock()
		}()
		for c.ctx.Err() == nil && time.Now().Before(l.ends) {
			err := c.routes.do(c.ctx, func(ctx context.Context, cli *clientv3.Client) error {
				_, err := cli.Txn(ctx).If(ownedBy(k, value)...).Then(clientv3.OpDelete(k)).Commit()
				return err
			})
			if err == nil || refused(err) {
				return
			}
			pause(c.ctx, undoRetry)
		}
	})
}

// Release deletes key if a version of value is in it. For the value of
// an acquisition that failed, it returns driver.ErrNotHeld at once: its
// acquisition wrote nothing, or the driver undoes it (see undo).
func (c *conn) Release(ctx context.Context, key, value string) error {
	if c.failed.take(value) {
		return driver.ErrNotHeld
	}
	k := c.prefix + key
	failed := false
	err := c.routes.do(ctx, func(ctx context.Context, cli *clientv3.Client) error {
		resp, err := cli.Txn(ctx).If(ownedBy(k, value)...).Then(clientv3.OpDelete(k)).Commit()
		switch {
		case err != nil:
			failed = true
			return err
		case resp.Succeeded:
			return nil
		case failed:
			return nil // the failed attempt may have deleted it
		}
		return driver.ErrNotHeld
	})
	if err != nil && !errors.Is(err, driver.ErrNotHeld) {
		return wrap(ctx, "release", err)
	}
	return err
}

// Extend puts key, if a version of value older than this one is in it,
// under a lease that serves ttl from now. A newer version means that a
// later extension got there first: an attempt of an older one that its
// member applies late can never move the key back to an older lease.
func (c *conn) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	l, err := c.leases.get(ctx, ttl)
	if err != nil {
		return wrap(ctx, "extend: lease grant", err)
	}
	k, v := c.prefix+key, c.stored(value, ttl)
	err = c.routes.do(ctx, func(ctx context.Context, cli *clientv3.Client) error {
		resp, err := cli.Txn(ctx).
			If(clientv3.Compare(clientv3.Value(k), ">", value+" "), clientv3.Compare(clientv3.Value(k), "<", v)).
			Then(clientv3.OpPut(k, v, clientv3.WithLease(l.id))).
			Else(clientv3.OpGet(k)).
			Commit()
		switch {
		case err != nil:
			return err
		case resp.Succeeded:
			return nil
		}
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) == 1 && string(kvs[0].Value) == v {
			return nil // an earlier attempt of this call was applied
		}
		return driver.ErrNotHeld
	})
	switch {
	case err == nil, errors.Is(err, driver.ErrNotHeld):
		return err
	case errors.Is(err, rpctypes.ErrLeaseNotFound):
		c.leases.drop(l)
	}
	return wrap(ctx, "extend", err)
}

// Inspect reads the key and its lease's time to live: two round trips.
// The TTL reported is the time left on the key's lease (which etcd counts
// in whole seconds, rounded down, so one second is added), at most the
// TTL its holder asked for.
func (c *conn) Inspect(ctx context.Context, key string) (driver.Holder, bool, error) {
	k := c.prefix + key
	var kv *clientv3.GetResponse
	err := c.routes.do(ctx, func(ctx context.Context, cli *clientv3.Client) (err error) {
		kv, err = cli.Get(ctx, k)
		return err
	})
	if err != nil {
		return driver.Holder{}, false, wrap(ctx, "inspect", err)
	}
	if len(kv.Kvs) == 0 {
		return driver.Holder{}, false, nil
	}
	held := kv.Kvs[0]
	value, asked, _ := parseStored(string(held.Value))
	var left int64
	err = c.routes.do(ctx, func(ctx context.Context, cli *clientv3.Client) error {
		resp, err := cli.TimeToLive(ctx, clientv3.LeaseID(held.Lease))
		if err == nil {
			left = resp.TTL
		}
		return err
	})
	switch {
	case err != nil:
		return driver.Holder{}, false, wrap(ctx, "inspect", err)
	case left < 0: // the lease ended since the read
		return driver.Holder{}, false, nil
	}
	ttl := time.Duration(left+1) * time.Second
	if asked > 0 {
		ttl = min(ttl, asked)
	}
	return driver.Holder{
		Value: value,
		TTL:   ttl,
		Lease: driver.Lease{Token: uint64(held.CreateRevision), Fenced: true},
	}, true, nil
}

// Ping makes a linearizable read, which only a member with a leader, and
// so a quorum, answers.
func (c *conn) Ping(ctx context.Context) error {
	err := c.routes.do(ctx, func(ctx context.Context, cli *clientv3.Client) error {
		_, err := cli.Get(ctx, c.prefix, clientv3.WithCountOnly())
		return err
	})
	if err != nil {
		return wrap(ctx, "ping", err)
	}
	return nil
}

// Watch subscribes to deletions of key (see watcher).
func (c *conn) Watch(ctx context.Context, key string) (driver.Watch, error) {
	w, err := c.watcher.watch(ctx, c.prefix+key)
	if err != nil {
		return nil, wrap(ctx, "watch", err)
	}
	return w, nil
}

// Close stops the background grants, undoings and watches, and closes
// the clients the connection made. The leases it was granted expire by
// their TTL, and with them the keys it still holds. It ends the calls in
// flight, and returns without waiting for an answer of the cluster.
func (c *conn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		c.undoMu.Lock()
		c.stop()
		c.undoMu.Unlock()
		err = c.routes.close() // first: calls in flight end with errClosed
		c.leases.close()
		c.undoing.Wait()
		c.watcher.close()
		err = errors.Join(c.closeFn(), err)
	})
	return err
}

// failedLimit bounds how many values failedValues remembers.
const failedLimit = 1024

// failedValues remembers the values of acquisitions that failed, having
// written nothing or with their undoing under way, so that the release the
// core sends after a failed acquisition costs no round trip (and does not
// wait for a cluster that is down). Forgetting one only costs its release
// a request.
type failedValues struct {
	mu    sync.Mutex
	set   map[string]struct{}
	order []string
}

func (u *failedValues) add(v string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.set == nil {
		u.set = make(map[string]struct{})
	}
	if len(u.order) >= failedLimit {
		delete(u.set, u.order[0])
		u.order = u.order[1:]
	}
	u.set[v] = struct{}{}
	u.order = append(u.order, v)
}

// take reports whether v is remembered, and forgets it.
func (u *failedValues) take(v string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, ok := u.set[v]; !ok {
		return false
	}
	delete(u.set, v)
	return true
}
