package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// ErrSessionTimeout is matched by the error of an acquisition whose TTL no
// session can serve: the ensemble negotiated another session timeout for
// it (the servers bound session timeouts by their minSessionTimeout and
// maxSessionTimeout), or the connection is one given to [New], whose one
// session serves only the TTL equal to its timeout, or the connection has
// as many sessions as Config.MaxSessions allows, all in use. It is also
// matched by the error of an extension to a TTL longer than the session's
// timeout.
var ErrSessionTimeout = errors.New("zookeeper: no session of the TTL's timeout")

// A session is one ZooKeeper session, with its own connection to a member:
// the ephemeral nodes of the locks it serves live as long as it does. Its
// timeout is the TTL of those locks.
type session struct {
	timeout time.Duration // negotiated with the ensemble
	zc      *zk.Conn
	events  <-chan zk.Event // nil for a session the driver does not own
	owned   bool            // opened by the driver, which closes it

	connStats                           // of its connections
	latest    atomic.Pointer[stallConn] // the connection dialed last

	users int // operations and leases using it; guarded by conn.mu
}

// nopLogger silences the ZooKeeper client, which logs every reconnection.
type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// openSession opens a session of timeout on the connector's ensemble and
// waits for the ensemble to grant it, with the timeout asked.
func (c *Connector) openSession(ctx context.Context, timeout time.Duration) (*session, error) {
	s, err := c.connect(ctx, timeout, min(c.cfg.MemberTimeout, timeout/2))
	if err != nil {
		return nil, err
	}
	if got := time.Duration(s.negotiated.Load()) * time.Millisecond; got != timeout {
		closeLater(s)
		return nil, fmt.Errorf("%w: asked for a session timeout of %v, the ensemble granted %v (its minSessionTimeout and maxSessionTimeout bound the TTLs it can serve)",
			ErrSessionTimeout, timeout, got)
	}
	s.timeout = timeout
	return s, nil
}

// negotiate opens a session asking for a timeout of asked, and closes it
// again: it returns the timeout the ensemble granted instead, bounded by
// its minSessionTimeout and maxSessionTimeout.
func (c *Connector) negotiate(ctx context.Context, asked time.Duration) (time.Duration, error) {
	s, err := c.connect(ctx, asked, c.cfg.MemberTimeout)
	if err != nil {
		return 0, err
	}
	defer s.close()
	return time.Duration(s.negotiated.Load()) * time.Millisecond, nil
}

// dialMember dials a member within timeout, through the caller's dial if
// the connector has one: go-zookeeper's dialer takes a timeout, not a
// context.
func (c *Connector) dialMember(network, addr string, timeout time.Duration) (net.Conn, error) {
	if c.dial == nil {
		return net.DialTimeout(network, addr, timeout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return c.dial(ctx, network, addr)
}

// connect opens a session, asking for timeout, on connections that a
// member's silence of stall ends, and waits for the ensemble to grant it;
// it authenticates if the DSN names a user.
func (c *Connector) connect(ctx context.Context, timeout, stall time.Duration) (*session, error) {
	s := &session{owned: true}
	dial := func(network, addr string, t time.Duration) (net.Conn, error) {
		nc, err := c.dialMember(network, addr, min(t, c.cfg.MemberTimeout))
		if err != nil {
			return nil, err
		}
		sc := newStallConn(nc, stall, &s.connStats)
		s.latest.Store(sc)
		return sc, nil
	}
	ready := make(chan struct{})
	var once sync.Once
	onEvent := func(ev zk.Event) {
		if ev.Type == zk.EventSession && ev.State == zk.StateHasSession {
			once.Do(func() { close(ready) })
		}
	}
	zc, events, err := zk.Connect(c.s.hosts, timeout, zk.WithDialer(dial), zk.WithLogger(nopLogger{}),
		zk.WithLogInfo(false), zk.WithEventCallback(onEvent))
	if err != nil {
		return nil, err
	}
	s.zc, s.events = zc, events
	select {
	case <-ready:
	case <-ctx.Done():
		closeLater(s)
		return nil, fmt.Errorf("no member granted a session: %w", context.Cause(ctx))
	}
	if c.s.username != "" {
		creds := []byte(c.s.username + ":" + c.s.password)
		if _, err := call(ctx, func() (struct{}, error) { return struct{}{}, s.zc.AddAuth("digest", creds) }, nil); err != nil {
			closeLater(s)
			return nil, fmt.Errorf("digest authentication as %q: %w", c.s.username, redactErr(err, c.s.password))
		}
	}
	return s, nil
}

// alive reports whether the session is the one with id sid, and not one
// the client opened after sid expired.
func (s *session) alive(sid int64) bool { return sid != 0 && s.zc.SessionID() == sid }

// close ends the session, if the driver owns it (the ensemble then deletes
// its ephemeral nodes at once), and waits for the client's goroutines.
func (s *session) close() {
	if !s.owned {
		return
	}
	s.zc.Close()
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return
			}
		case <-t.C:
			return
		}
	}
}

// call runs f, a blocking call of the ZooKeeper client, under ctx. If ctx
// ends first, call returns ctx's error at once; f runs on in its goroutine
// (the client ends every call when its connection drops or closes), and
// passes its outcome to late, if not nil.
func call[T any](ctx context.Context, f func() (T, error), late func(T, error)) (T, error) {
	v, _, err := callOrAbandon(ctx, f, late)
	return v, err
}

// callOrAbandon is call, reporting also whether it abandoned f to late.
func callOrAbandon[T any](ctx context.Context, f func() (T, error), late func(T, error)) (T, bool, error) {
	if ctx.Err() != nil {
		var zero T
		return zero, false, context.Cause(ctx) // nothing sent
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	var mu sync.Mutex
	abandoned := false
	go func() {
		v, err := f()
		mu.Lock()
		defer mu.Unlock()
		if abandoned {
			if late != nil {
				late(v, err)
			}
			return
		}
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, false, r.err
	case <-ctx.Done():
		mu.Lock()
		defer mu.Unlock()
		select {
		case r := <-ch:
			return r.v, false, r.err
		default:
		}
		abandoned = true
		var zero T
		return zero, true, context.Cause(ctx)
	}
}

// redactErr returns err with every occurrence of secret in its message
// replaced.
func redactErr(err error, secret string) error {
	if secret == "" || !strings.Contains(err.Error(), secret) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), secret, "xxxxx"))
}
