package locktest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/memory"
)

// Connect connects to the wrapped backend and returns a connection that
// passes every call through b's faults. An outage does not fail Connect,
// as most drivers connect without a round trip: the calls fail instead.
func (b *Backend) Connect(ctx context.Context) (driver.Conn, error) {
	b.mu.Lock()
	if b.inner == nil {
		b.inner = memory.New()
	}
	inner := b.inner
	b.mu.Unlock()
	dc, err := inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if dc == nil {
		return nil, errors.New("locktest: the wrapped connector returned a nil connection")
	}
	c := &conn{b: b, inner: dc, closed: make(chan struct{})}
	c.extender, _ = dc.(driver.Extender)
	c.leaser, _ = dc.(driver.LeaseConn)
	c.waiter, _ = dc.(driver.Waiter)
	c.transferer, _ = dc.(driver.Transferer)
	c.pinger, _ = dc.(driver.Pinger)
	c.inspector, _ = dc.(driver.Inspector)
	return c.withCapabilities(), nil
}

// conn passes the calls of one client through its Backend's faults to a
// wrapped connection. It has the optional interfaces the wrapped one has
// (see withCapabilities), but for Pinger and Inspector, which it always
// has. Of a wrapped LeaseConn, it keeps the leases and is an Extender.
type conn struct {
	b          *Backend
	inner      driver.Conn
	extender   driver.Extender
	leaser     driver.LeaseConn
	waiter     driver.Waiter
	transferer driver.Transferer
	pinger     driver.Pinger
	inspector  driver.Inspector
	closed     chan struct{}
	closeOnce  sync.Once
}

var (
	_ driver.Conn      = (*conn)(nil)
	_ driver.Pinger    = (*conn)(nil)
	_ driver.Inspector = (*conn)(nil)
)

// The optional methods, each on a type of its own, so that a conn can be
// given exactly the optional interfaces of the connection it wraps.
type (
	extendMethod   struct{ c *conn }
	watchMethod    struct{ c *conn }
	transferMethod struct{ c *conn }
)

var (
	_ driver.Extender   = extendMethod{}
	_ driver.Waiter     = watchMethod{}
	_ driver.Transferer = transferMethod{}
)

// withCapabilities returns c with the optional interfaces of the
// connection it wraps that change what the core does: extending, watching
// and transferring. A conn that claimed one its wrapped connection lacks
// would change the core's path (a release would try a transfer).
func (c *conn) withCapabilities() driver.Conn {
	x, w, t := extendMethod{c}, watchMethod{c}, transferMethod{c}
	switch ext := c.extender != nil || c.leaser != nil; {
	case ext && c.waiter != nil && c.transferer != nil:
		return struct {
			*conn
			extendMethod
			watchMethod
			transferMethod
		}{c, x, w, t}
	case ext && c.waiter != nil:
		return struct {
			*conn
			extendMethod
			watchMethod
		}{c, x, w}
	case ext && c.transferer != nil:
		return struct {
			*conn
			extendMethod
			transferMethod
		}{c, x, t}
	case ext:
		return struct {
			*conn
			extendMethod
		}{c, x}
	case c.waiter != nil && c.transferer != nil:
		return struct {
			*conn
			watchMethod
			transferMethod
		}{c, w, t}
	case c.waiter != nil:
		return struct {
			*conn
			watchMethod
		}{c, w}
	case c.transferer != nil:
		return struct {
			*conn
			transferMethod
		}{c, t}
	}
	return c
}

func (c *conn) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	if err := c.b.unavailable(); err != nil {
		return driver.Lease{}, err
	}
	start := time.Now()
	lease, err := c.inner.Acquire(ctx, key, value, ttl)
	if err != nil {
		return driver.Lease{}, err
	}
	return c.b.granted(c, key, value, lease, start.Add(ttl)), nil
}

func (c *conn) Release(ctx context.Context, key, value string) error {
	if err := c.b.unavailable(); err != nil {
		return err
	}
	if err := c.b.delayRelease(ctx); err != nil {
		return err
	}
	g, lease, lost := c.b.lookup(key, value)
	if lost {
		return driver.ErrNotHeld
	}
	err := c.release(ctx, key, value, lease, g != nil)
	if g != nil && (err == nil || errors.Is(err, driver.ErrNotHeld)) {
		c.b.mu.Lock()
		c.b.finish(g, grantReleased)
		c.b.mu.Unlock()
	}
	return err
}

// release releases key held by value in the wrapped connection, handing
// it lease if it wants one and known says lease is the grant's.
func (c *conn) release(ctx context.Context, key, value string, lease driver.Lease, known bool) error {
	if c.leaser != nil && known {
		return c.leaser.ReleaseLease(ctx, key, value, lease)
	}
	return c.inner.Release(ctx, key, value)
}

func (m extendMethod) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	c, b := m.c, m.c.b
	if err := b.unavailable(); err != nil {
		return err
	}
	kind, resume, err := b.nextExtFault()
	switch kind {
	case failExt:
		return err
	case refuseExt:
		return b.refuse(key, value)
	case hangExt:
		if err := b.waitHung(ctx, resume); err != nil {
			return err
		}
	}
	g, lease, lost := b.lookup(key, value)
	if lost {
		return driver.ErrNotHeld
	}
	start := time.Now()
	switch {
	case c.leaser != nil && g != nil:
		lease, err = c.leaser.ExtendLease(ctx, key, value, lease, ttl)
	case c.extender != nil:
		err = c.extender.Extend(ctx, key, value, ttl)
	default:
		// A LeaseConn needs the grant's lease, which b no longer has.
		err = driver.ErrNotHeld
	}
	if g == nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case err == nil:
		if c.leaser != nil {
			g.inner = lease
		}
		g.expires = start.Add(ttl)
	case errors.Is(err, driver.ErrNotHeld):
		b.finish(g, grantLost)
	}
	return err
}

// refuse lets the backend let go of key held by value, as a refused
// extension says it has, and returns the refusal.
func (b *Backend) refuse(key, value string) error {
	g, _, _ := b.lookup(key, value)
	if g != nil {
		b.mu.Lock()
		held := g.state == grantHeld
		b.finish(g, grantLost)
		b.mu.Unlock()
		if held {
			g.releaseInner()
		}
	}
	return fmt.Errorf("locktest: extension refused: %w", driver.ErrNotHeld)
}

func (m watchMethod) Watch(ctx context.Context, key string) (driver.Watch, error) {
	if err := m.c.b.unavailable(); err != nil {
		return nil, err
	}
	return m.c.waiter.Watch(ctx, key)
}

func (m transferMethod) Transfer(ctx context.Context, key, value, next string, ttl time.Duration) (driver.Lease, error) {
	c, b := m.c, m.c.b
	if err := b.unavailable(); err != nil {
		return driver.Lease{}, err
	}
	if err := b.delayRelease(ctx); err != nil {
		return driver.Lease{}, err
	}
	g, _, lost := b.lookup(key, value)
	if lost {
		return driver.Lease{}, driver.ErrNotHeld
	}
	start := time.Now()
	lease, err := c.transferer.Transfer(ctx, key, value, next, ttl)
	if g != nil && (err == nil || errors.Is(err, driver.ErrNotHeld)) {
		b.mu.Lock()
		b.finish(g, grantReleased)
		b.mu.Unlock()
	}
	if err != nil {
		return driver.Lease{}, err
	}
	return b.granted(c, key, next, lease, start.Add(ttl)), nil
}

// Ping fails while the backend is unavailable, and otherwise asks the
// wrapped connection, if it can be asked.
func (c *conn) Ping(ctx context.Context) error {
	if err := c.b.unavailable(); err != nil {
		return err
	}
	if c.pinger != nil {
		return c.pinger.Ping(ctx)
	}
	return nil
}

// Inspect asks the wrapped connection, and reports the token b handed out
// to the holder.
func (c *conn) Inspect(ctx context.Context, key string) (driver.Holder, bool, error) {
	if err := c.b.unavailable(); err != nil {
		return driver.Holder{}, false, err
	}
	if c.inspector == nil {
		return driver.Holder{}, false, fmt.Errorf("locktest: driver %T cannot tell who holds a key: %w", c.inner, errors.ErrUnsupported)
	}
	h, held, err := c.inspector.Inspect(ctx, key)
	if err != nil || !held {
		return h, held, err
	}
	g, _, _ := c.b.lookup(key, h.Value)
	h.Lease = driver.Lease{Token: h.Lease.Token, Fenced: h.Lease.Fenced}
	if g != nil {
		h.Lease.Token = g.token
	}
	return h, true, nil
}

// Close closes the wrapped connection.
func (c *conn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.inner.Close()
}
