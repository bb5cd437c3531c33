package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/go-zookeeper/zk"
)

// conn is a connection to the ensemble: a session per TTL in use, the
// leases it holds, and the reaper that deletes what they leave behind.
type conn struct {
	c    *Connector
	root string
	acl  []zk.ACL

	ctx    context.Context // cancelled by Close: ends the reaper, watches and session openings
	cancel context.CancelFunc
	work   sync.WaitGroup // the goroutines ctx ends

	mu       sync.Mutex
	base     *session
	sessions map[time.Duration]*slot // by timeout, the base session's included
	leases   map[leaseKey]*lease     // acquiring or held
	doomed   []*lease                // nodes to delete, for the reaper
	refused  map[time.Duration]error // timeouts the ensemble would not grant
	closed   bool

	wake chan struct{} // tells the reaper to look again
}

var (
	_ driver.Conn      = (*conn)(nil)
	_ driver.Extender  = (*conn)(nil)
	_ driver.Waiter    = (*conn)(nil)
	_ driver.Pinger    = (*conn)(nil)
	_ driver.Inspector = (*conn)(nil)
)

// slot is a session of the pool, opened once by the first call that needs
// it.
type slot struct {
	ready chan struct{} // closed once s or err is set
	s     *session
	err   error
}

func newConn(c *Connector, base *session) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	cn := &conn{
		c: c, root: c.cfg.Root, acl: c.acl(),
		ctx: ctx, cancel: cancel,
		base:     base,
		sessions: make(map[time.Duration]*slot),
		leases:   make(map[leaseKey]*lease),
		refused:  make(map[time.Duration]error),
		wake:     make(chan struct{}, 1),
	}
	ready := make(chan struct{})
	close(ready)
	cn.sessions[base.timeout] = &slot{ready: ready, s: base}
	cn.work.Add(1)
	go cn.reap()
	return cn
}

var errClosed = errors.New("zookeeper: connection closed")

// lateCreates counts the creates whose attempt gave up waiting, for tests.
var lateCreates atomic.Int64

// sessionFor returns the session that serves leases of ttl, opened if need
// be, counting one more user of it: the caller calls leave when done.
func (cn *conn) sessionFor(ctx context.Context, ttl time.Duration) (*session, error) {
	timeout := ttl.Truncate(time.Millisecond)
	for {
		cn.mu.Lock()
		if cn.closed {
			cn.mu.Unlock()
			return nil, errClosed
		}
		sl := cn.sessions[timeout]
		if sl == nil {
			var err error
			if sl, err = cn.openSlot(timeout); err != nil {
				cn.mu.Unlock()
				return nil, err
			}
		}
		cn.mu.Unlock()
		select {
		case <-sl.ready:
		case <-ctx.Done():
			return nil, fmt.Errorf("opening a session of %v: %w", timeout, context.Cause(ctx))
		}
		if sl.err != nil {
			return nil, sl.err
		}
		cn.mu.Lock()
		if cn.sessions[timeout] == sl && !cn.closed {
			sl.s.users++
			cn.mu.Unlock()
			return sl.s, nil
		}
		cn.mu.Unlock() // closed to make room meanwhile: open it again
	}
}

// openSlot starts opening a session of timeout, making room for it if the
// pool is full. cn.mu must be held.
func (cn *conn) openSlot(timeout time.Duration) (*slot, error) {
	if cn.c.zc != nil {
		return nil, fmt.Errorf("%w: the connection given to New serves the TTL %v only (its session timeout), not %v",
			ErrSessionTimeout, cn.base.timeout, timeout)
	}
	if err := cn.refused[timeout]; err != nil {
		return nil, err
	}
	if len(cn.sessions) >= cn.c.cfg.MaxSessions {
		cn.evictIdle()
	}
	if len(cn.sessions) >= cn.c.cfg.MaxSessions {
		return nil, fmt.Errorf("%w: %d sessions, one per TTL, are in use (max_sessions) and none is idle", ErrSessionTimeout, len(cn.sessions))
	}
	sl := &slot{ready: make(chan struct{})}
	cn.sessions[timeout] = sl
	cn.work.Add(1)
	go func() {
		defer cn.work.Done()
		ctx, cancel := withTimeout(cn.ctx, "dial timeout", cn.c.s.dialTimeout)
		s, err := cn.c.openSession(ctx, timeout)
		cancel()
		cn.mu.Lock()
		if err != nil {
			sl.err = fmt.Errorf("opening a session of %v: %w", timeout, err)
			delete(cn.sessions, timeout)
			if errors.Is(err, ErrSessionTimeout) {
				cn.refused[timeout] = sl.err // the servers' bounds: asking again gets the same
			}
		} else if cn.closed {
			sl.err = errClosed
			delete(cn.sessions, timeout)
			cn.mu.Unlock()
			s.close()
			close(sl.ready)
			return
		}
		sl.s = s
		close(sl.ready)
		cn.mu.Unlock()
	}()
	return sl, nil
}

// evictIdle closes the sessions, but the base one, that nothing uses.
// cn.mu must be held.
func (cn *conn) evictIdle() {
	for t, sl := range cn.sessions {
		select {
		case <-sl.ready:
		default:
			continue
		}
		if sl.s == nil || sl.s == cn.base || sl.s.users > 0 {
			continue
		}
		delete(cn.sessions, t)
		cn.work.Add(1)
		go func(s *session) {
			defer cn.work.Done()
			s.close()
		}(sl.s)
	}
}

// leave ends a use of s that sessionFor counted.
func (cn *conn) leave(s *session) {
	cn.mu.Lock()
	s.users--
	cn.mu.Unlock()
}

func (cn *conn) keyPath(key string) string { return cn.root + "/" + escapeKey(key) }

// Acquire makes one attempt: if the key's node has no attempt under it,
// it adds value's ephemeral sequential node in the session of ttl, and
// holds the key if that node is the lowest; otherwise it deletes its node
// again and reports the key held.
func (cn *conn) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	start := time.Now()
	caller := ctx
	ctx, cancel := cn.bound(ctx)
	defer cancel()
	s, err := cn.sessionFor(ctx, ttl)
	if err != nil {
		return driver.Lease{}, wrap(caller, "acquire", err)
	}
	defer cn.leave(s)
	parent := cn.keyPath(key)
	switch held, err := cn.heldNow(ctx, s, parent); {
	case err != nil:
		return driver.Lease{}, wrap(caller, "acquire", err)
	case held:
		return driver.Lease{}, driver.ErrHeld
	}
	k := leaseKey{key, value}
	l := &lease{key: k, sess: s, parent: parent, ttl: ttl}
	cn.mu.Lock()
	if cn.leases[k] != nil {
		cn.mu.Unlock()
		return driver.Lease{}, errors.New("zookeeper: acquire: the value is in use by another acquisition")
	}
	cn.leases[k] = l
	s.users++ // for the lease, until it is disposed of
	cn.mu.Unlock()

	lease, err := cn.attempt(ctx, l, value, start)
	if err != nil {
		cn.doom(l)
		if errors.Is(err, driver.ErrHeld) {
			return driver.Lease{}, err
		}
		return driver.Lease{}, wrap(caller, "acquire", err)
	}
	return lease, nil
}

// heldNow reports whether the key of node parent is held, as the leader
// sees it. A member answers reads from its own copy, which may lag behind
// the leader's (a release another client saw answered may not be there
// yet): a key that looks held is looked at again after a sync. A key that
// looks free needs no sync: the attempt that follows decides after its own
// write, which the member applies after every write before it.
func (cn *conn) heldNow(ctx context.Context, s *session, parent string) (bool, error) {
	kids, err := cn.children(ctx, s, parent)
	if err != nil || !holds(kids) {
		return false, err
	}
	if kids, err = cn.syncedChildren(ctx, s, parent); err != nil {
		return false, err
	}
	return holds(kids), nil
}

// syncedChildren returns the children of path, as the leader sees them.
func (cn *conn) syncedChildren(ctx context.Context, s *session, path string) ([]string, error) {
	if err := retryErr(ctx, func() error { _, err := s.zc.Sync(path); return err }); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return nil, err
	}
	return cn.children(ctx, s, path)
}

// holds reports whether children hold a key: whether any is an attempt.
func holds(children []string) bool {
	_, ok := lowest(children)
	return ok
}

// attempt creates l's node and finds out whether it holds the key. On
// success l is held; on error the caller dooms it.
func (cn *conn) attempt(ctx context.Context, l *lease, value string, start time.Time) (driver.Lease, error) {
	path, err := cn.create(ctx, l, value)
	if err != nil {
		return driver.Lease{}, err
	}
	name := path[len(l.parent)+1:]
	var (
		kids    []string
		kidsErr error
		wg      sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		kids, kidsErr = cn.children(ctx, l.sess, l.parent)
	}()
	ok, stat, err := cn.exists(ctx, l.sess, path)
	wg.Wait()
	switch {
	case err != nil:
		return driver.Lease{}, err
	case kidsErr != nil:
		return driver.Lease{}, kidsErr
	case !ok:
		return driver.Lease{}, errors.New("the attempt's node vanished as it was made: the session expired")
	}
	if low, _ := lowest(kids); low.name != name {
		// Another attempt came first: give way at once, so that the node
		// never holds the key after the other attempt is gone. If the
		// call's time runs out first, the reaper deletes the node.
		if cn.dispose(ctx, l) == nil {
			cn.forget(l)
		}
		return driver.Lease{}, driver.ErrHeld
	}
	cn.mu.Lock()
	l.sid = stat.EphemeralOwner
	l.token = uint64(stat.Czxid)
	l.deadline = start.Add(l.ttl)
	l.state = held
	cn.mu.Unlock()
	cn.poke()
	return driver.Lease{Token: l.token, Fenced: true}, nil
}

// create makes l's node, an ephemeral sequential child of l.parent named
// after value, and returns its path. A create whose reply was lost is
// looked for by its name; one cut off by ctx records its outcome in l
// when it comes.
func (cn *conn) create(ctx context.Context, l *lease, value string) (string, error) {
	s := l.sess
	prefix := l.parent + "/" + attemptPrefix(value, false)
	data := []byte(strconv.FormatInt(l.ttl.Milliseconds(), 10))
	late := func(path string, err error) { cn.lateCreate(l, path, err) }
	for try := 0; ; try++ {
		cn.mu.Lock()
		l.inflight = true
		cn.mu.Unlock()
		path, abandoned, err := callOrAbandon(ctx, func() (string, error) { return s.zc.Create(prefix, data, zk.FlagEphemeralSequential, cn.acl) }, late)
		if abandoned {
			return "", err // late records the outcome
		}
		cn.mu.Lock()
		l.inflight = false
		if err == nil {
			l.path = path
		}
		cn.mu.Unlock()
		switch {
		case err == nil:
			return path, nil
		case errors.Is(err, zk.ErrNoNode) && try < 5:
			// The key's node is missing, or was removed as an empty
			// container meanwhile.
			if err := cn.ensureParent(ctx, s, l.parent); err != nil {
				return "", err
			}
		case errors.Is(err, zk.ErrConnectionClosed):
			// Sent, and maybe made: look for it by its name.
			name, found, ferr := cn.find(ctx, s, l.parent, value, false)
			switch {
			case ferr != nil:
				cn.mu.Lock()
				l.doubt = true
				cn.mu.Unlock()
				return "", fmt.Errorf("%w (and looking for the node: %w)", err, ferr)
			case found:
				path := l.parent + "/" + name
				cn.mu.Lock()
				l.path = path
				cn.mu.Unlock()
				return path, nil
			}
		case retryable(err):
			if perr := pause(ctx, try); perr != nil {
				return "", fmt.Errorf("%w (while retrying after: %w)", perr, err)
			}
		default:
			return "", err
		}
	}
}

// lateCreate records the outcome of a create that its attempt gave up
// waiting for.
func (cn *conn) lateCreate(l *lease, path string, err error) {
	lateCreates.Add(1)
	cn.mu.Lock()
	l.inflight = false
	switch {
	case err == nil:
		l.path = path
	case !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrNoServer) && !errors.Is(err, zk.ErrSessionExpired):
		l.doubt = true
	}
	cn.mu.Unlock()
	cn.poke()
}

// find looks for value's node among parent's children, moved or not as
// asked, after a sync, so that a create the ensemble applied before is
// seen.
func (cn *conn) find(ctx context.Context, s *session, parent, value string, moved bool) (string, bool, error) {
	kids, err := cn.syncedChildren(ctx, s, parent)
	if err != nil {
		return "", false, err
	}
	name, ok := findAttempt(kids, value, moved)
	return name, ok, nil
}

// Release deletes value's node, if it holds key. For the value of an
// acquisition that failed, it returns driver.ErrNotHeld at once.
func (cn *conn) Release(ctx context.Context, key, value string) error {
	caller := ctx
	ctx, cancel := cn.bound(ctx)
	defer cancel()
	cn.mu.Lock()
	l := cn.leases[leaseKey{key, value}]
	wasHeld := l != nil && l.state == held
	cn.mu.Unlock()
	if !wasHeld {
		// A failed attempt of value's, if any, is the reaper's: its node
		// is deleted in the background, so that the core's cleanup after
		// the failure does not wait for an ensemble that does not answer.
		return driver.ErrNotHeld
	}
	existed, err := cn.delete(ctx, l.sess, l.path)
	if err != nil {
		return wrap(caller, "release", err)
	}
	cn.forget(l)
	if !existed {
		return driver.ErrNotHeld
	}
	return nil
}

// Extend confirms that value's node still exists in its session, through
// the leader (a sync, then a read), and moves its lease's end to ttl from
// now. The session's timeout bounds ttl: past it, the ensemble could drop
// the node before the lease ends.
func (cn *conn) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	start := time.Now()
	caller := ctx
	ctx, cancel := cn.bound(ctx)
	defer cancel()
	cn.mu.Lock()
	l := cn.leases[leaseKey{key, value}]
	if l == nil || l.state != held || !start.Before(l.deadline) {
		cn.mu.Unlock()
		return driver.ErrNotHeld
	}
	s, path, sid := l.sess, l.path, l.sid
	cn.mu.Unlock()
	if ttl.Truncate(time.Millisecond) != s.timeout {
		err := cn.move(ctx, l, ttl, start)
		if err != nil && !errors.Is(err, driver.ErrNotHeld) {
			return wrap(caller, "extend", err)
		}
		return err
	}
	if !s.alive(sid) {
		cn.doom(l)
		return fmt.Errorf("%w: its session expired", driver.ErrNotHeld)
	}
	if err := retryErr(ctx, func() error { _, err := s.zc.Sync(path); return err }); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return wrap(caller, "extend", err)
	}
	ok, stat, err := cn.exists(ctx, s, path)
	if err != nil {
		return wrap(caller, "extend", err)
	}
	if !ok || stat.EphemeralOwner != sid || !s.alive(sid) {
		cn.doom(l)
		return fmt.Errorf("%w: its node is gone (its session expired)", driver.ErrNotHeld)
	}
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if l.state != held || !time.Now().Before(l.deadline) {
		return driver.ErrNotHeld
	}
	l.deadline = start.Add(ttl)
	cn.poke() // the reaper has a new deadline
	return nil
}

// move extends l to ttl, another TTL than its session's timeout, by moving
// its node to the session of ttl: one transaction, sent through that
// session, deletes the node and creates a moved holder's node there,
// which comes before any attempt (see names.go), so that the key is never
// free nor anyone else's in between. The lock keeps its token.
func (cn *conn) move(ctx context.Context, l *lease, ttl time.Duration, start time.Time) error {
	s2, err := cn.sessionFor(ctx, ttl)
	if err != nil {
		return err
	}
	cn.mu.Lock()
	old, token, value := l.path, l.token, l.key.value
	cn.mu.Unlock()
	data := []byte(strconv.FormatInt(ttl.Milliseconds(), 10) + " " + strconv.FormatUint(token, 10))
	prefix := l.parent + "/" + attemptPrefix(value, true)
	orphan := func(path string) { // a moved node nobody holds
		nl := &lease{key: l.key, sess: s2, parent: l.parent, path: path, doubt: path == ""}
		cn.mu.Lock()
		s2.users++
		cn.mu.Unlock()
		cn.doom(nl)
	}
	late := func(res []zk.MultiResponse, err error) {
		if err == nil && len(res) == 2 {
			orphan(res[1].String)
		} else if !errors.Is(err, zk.ErrNoNode) {
			orphan("") // looked for by name
		}
	}
	res, abandoned, err := callOrAbandon(ctx, func() ([]zk.MultiResponse, error) {
		return s2.zc.Multi(&zk.DeleteRequest{Path: old, Version: -1},
			&zk.CreateRequest{Path: prefix, Data: data, Acl: cn.acl, Flags: zk.FlagEphemeralSequential})
	}, late)
	var moved string
	switch {
	case abandoned:
		cn.leave(s2)
		return fmt.Errorf("moving the lock to a session of %v: %w", ttl, err)
	case err == nil && len(res) == 2 && res[0].Error == nil && res[1].Error == nil:
		moved = res[1].String
	case errors.Is(err, zk.ErrNoNode) || len(res) == 2 && errors.Is(res[0].Error, zk.ErrNoNode):
		cn.leave(s2)
		cn.doom(l)
		return fmt.Errorf("%w: its node is gone (its session expired)", driver.ErrNotHeld)
	case retryable(err):
		name, found, ferr := cn.find(ctx, s2, l.parent, value, true)
		if ferr != nil || !found {
			cn.leave(s2)
			if ferr != nil {
				orphan("")
			}
			return fmt.Errorf("moving the lock to a session of %v: %w", ttl, err)
		}
		moved = l.parent + "/" + name
	default:
		cn.leave(s2)
		return fmt.Errorf("moving the lock to a session of %v: %w", ttl, err)
	}
	ok, stat, err := cn.exists(ctx, s2, moved)
	cn.mu.Lock()
	if err != nil || !ok || l.state != held || !time.Now().Before(l.deadline) {
		cn.mu.Unlock()
		orphan(moved)
		cn.leave(s2)
		cn.doom(l)
		if err != nil {
			return err
		}
		return driver.ErrNotHeld
	}
	l.sess.users--
	l.sess, l.path, l.sid, l.ttl = s2, moved, stat.EphemeralOwner, ttl
	l.deadline = start.Add(ttl)
	cn.mu.Unlock()
	cn.poke()
	return nil
}

// Inspect reports the holder of key: its lowest attempt.
func (cn *conn) Inspect(ctx context.Context, key string) (driver.Holder, bool, error) {
	caller := ctx
	ctx, cancel := cn.bound(ctx)
	defer cancel()
	s := cn.base
	parent := cn.keyPath(key)
	for {
		kids, err := cn.syncedChildren(ctx, s, parent)
		if err != nil {
			return driver.Holder{}, false, wrap(caller, "inspect", err)
		}
		low, ok := lowest(kids)
		if !ok {
			return driver.Holder{}, false, nil
		}
		got, err := retry(ctx, func() (nodeData, error) {
			data, stat, err := s.zc.Get(parent + "/" + low.name)
			return nodeData{data: data, stat: stat}, err
		})
		data, stat := got.data, got.stat
		if errors.Is(err, zk.ErrNoNode) {
			continue // released meanwhile
		}
		if err != nil {
			return driver.Holder{}, false, wrap(caller, "inspect", err)
		}
		h := driver.Holder{Value: low.value, Lease: driver.Lease{Token: uint64(stat.Czxid), Fenced: true}}
		ttlText, tokText, moved := strings.Cut(string(data), " ")
		if ms, err := strconv.ParseInt(ttlText, 10, 64); err == nil && ms > 0 {
			h.TTL = time.Duration(ms) * time.Millisecond // the session's timeout: its node lives at most that long after its holder vanishes
		}
		if tok, err := strconv.ParseUint(tokText, 10, 64); moved && err == nil {
			h.Lease.Token = tok // granted to the node it was moved from
		}
		cn.mu.Lock()
		if l := cn.leases[leaseKey{key, low.value}]; l != nil && l.state == held {
			h.TTL = max(time.Until(l.deadline), time.Millisecond)
		}
		cn.mu.Unlock()
		return h, true, nil
	}
}

// Ping checks that the ensemble answers, through the base session.
func (cn *conn) Ping(ctx context.Context) error {
	caller := ctx
	ctx, cancel := cn.bound(ctx)
	defer cancel()
	_, _, err := cn.exists(ctx, cn.base, cn.root)
	if err != nil {
		return wrap(caller, "ping", err)
	}
	return nil
}

// Close ends the reaper and the watches, and closes the sessions the
// driver opened: the ensemble deletes their nodes at once.
func (cn *conn) Close() error {
	cn.mu.Lock()
	if cn.closed {
		cn.mu.Unlock()
		return nil
	}
	cn.closed = true
	var ss []*session
	for _, sl := range cn.sessions {
		select {
		case <-sl.ready:
			if sl.s != nil {
				ss = append(ss, sl.s)
			}
		default: // the opening goroutine closes it
		}
	}
	cn.mu.Unlock()
	cn.cancel()
	cn.work.Wait()
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.close()
		}()
	}
	wg.Wait()
	return nil
}

// ensureRoot creates the root node and its ancestors, where missing.
func (cn *conn) ensureRoot(ctx context.Context) error {
	s := cn.base
	for i := 1; i <= len(cn.root); i++ {
		if i < len(cn.root) && cn.root[i] != '/' {
			continue
		}
		p := cn.root[:i]
		err := retryErr(ctx, func() error { _, err := s.zc.Create(p, nil, 0, cn.acl); return err })
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}

// ensureParent creates a key's node, a container: the ensemble removes it
// once its last child is gone.
func (cn *conn) ensureParent(ctx context.Context, s *session, parent string) error {
	err := retryErr(ctx, func() error { _, err := s.zc.CreateContainer(parent, nil, zk.FlagContainer, cn.acl); return err })
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		if errors.Is(err, zk.ErrNoNode) {
			return fmt.Errorf("the root %s is missing: %w", cn.root, err)
		}
		return err
	}
	return nil
}

// children returns the children of path; none if it does not exist.
func (cn *conn) children(ctx context.Context, s *session, path string) ([]string, error) {
	kids, err := retry(ctx, func() ([]string, error) { kids, _, err := s.zc.Children(path); return kids, err })
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	return kids, err
}

// exists reports whether path exists, with its stat.
func (cn *conn) exists(ctx context.Context, s *session, path string) (bool, *zk.Stat, error) {
	got, err := retry(ctx, func() (nodeData, error) {
		ok, stat, err := s.zc.Exists(path)
		return nodeData{ok: ok, stat: stat}, err
	})
	return got.ok, got.stat, err
}

// delete deletes path, and reports whether it existed. A delete retried
// after a lost reply that finds nothing took effect the first time.
func (cn *conn) delete(ctx context.Context, s *session, path string) (existed bool, err error) {
	lost := false
	for try := 0; ; try++ {
		_, err = call(ctx, func() (struct{}, error) { return struct{}{}, s.zc.Delete(path, -1) }, nil)
		if !retryable(err) {
			break
		}
		lost = lost || errors.Is(err, zk.ErrConnectionClosed)
		if perr := pause(ctx, try); perr != nil {
			return false, fmt.Errorf("%w (while retrying after: %w)", perr, err)
		}
	}
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, zk.ErrNoNode):
		return lost, nil
	}
	return false, err
}

// nodeData is what a read of a node returns.
type nodeData struct {
	data []byte
	stat *zk.Stat
	ok   bool
}

// retry runs f, a call of the ZooKeeper client, under ctx, again after
// errors that a reconnection may cure, until ctx ends. f must not touch
// its caller's variables: it may outlive the call.
func retry[T any](ctx context.Context, f func() (T, error)) (T, error) {
	for try := 0; ; try++ {
		v, err := call(ctx, f, nil)
		if err == nil || !retryable(err) {
			return v, err
		}
		if perr := pause(ctx, try); perr != nil {
			return v, fmt.Errorf("%w (while retrying after: %w)", perr, err)
		}
	}
}

// retryErr is retry for a call that returns only an error.
func retryErr(ctx context.Context, f func() error) error {
	_, err := retry(ctx, func() (struct{}, error) { return struct{}{}, f() })
	return err
}

// retryable reports whether err is one that a reconnection may cure.
// A request the client failed to write to a connection already closed (by
// the driver's dialer, see stallConn) comes back with the socket's error,
// net.ErrClosed: it was not sent.
func retryable(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrSessionMoved) || errors.Is(err, zk.ErrSessionExpired) ||
		errors.Is(err, net.ErrClosed)
}

// pause waits before retry number try, or until ctx ends.
func pause(ctx context.Context, try int) error {
	d := min(5*time.Millisecond<<min(try, 5), 100*time.Millisecond)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
