package conformance_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/memory"
)

// A networked driver for the Dialer cases: the memory driver behind a
// network hop. Every call first makes a round trip over a TCP connection
// to an echo server of the test's own, dialed through the caller's dial,
// and fails as unavailable when that connection does. The broken variants
// take a dialer and use it for none, or for only some, of their
// connections, as a driver would that dials the others itself.

// dialing says which connections of the wired driver go through the
// caller's dial.
type dialing int

const (
	dialAll   dialing = iota // intact
	dialNone                 // broken: the dial is ignored
	dialFirst                // broken: Connect dials a first connection through it, then the calls' link with net.Dialer
)

// wiredDriver is the memory store behind the echo server at addr.
type wiredDriver struct {
	store   *memory.Store
	dialing dialing
}

var _ driver.DialerDriver = wiredDriver{}

func (w wiredDriver) OpenConnectorDialer(addr string, dial driver.DialFunc) (driver.Connector, error) {
	own := (&net.Dialer{}).DialContext
	if dial == nil {
		dial = own
	}
	c := wiredConnector{store: w.store, addr: addr, dial: dial}
	switch w.dialing {
	case dialNone:
		c.dial = own
	case dialFirst:
		c.first, c.dial = dial, own
	}
	return c, nil
}

type wiredConnector struct {
	store *memory.Store
	addr  string
	dial  driver.DialFunc
	first driver.DialFunc // if not nil, dials a connection at Connect, closed at once
}

func (w wiredConnector) Connect(ctx context.Context) (driver.Conn, error) {
	if w.first != nil {
		c, err := w.first(ctx, "tcp", w.addr)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", driver.ErrUnavailable, err)
		}
		c.Close()
	}
	in, err := w.store.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return wiredConn{base{in}, &link{dial: w.dial, addr: w.addr}}, nil
}

// wiredConn makes a round trip over its link before each call.
type wiredConn struct {
	base
	link *link
}

func (c wiredConn) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	if err := c.link.roundTrip(ctx); err != nil {
		return driver.Lease{}, err
	}
	return c.base.Acquire(ctx, key, value, ttl)
}

func (c wiredConn) Release(ctx context.Context, key, value string) error {
	if err := c.link.roundTrip(ctx); err != nil {
		return err
	}
	return c.base.Release(ctx, key, value)
}

func (c wiredConn) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	if err := c.link.roundTrip(ctx); err != nil {
		return err
	}
	return c.base.Extend(ctx, key, value, ttl)
}

func (c wiredConn) Watch(ctx context.Context, key string) (driver.Watch, error) {
	if err := c.link.roundTrip(ctx); err != nil {
		return nil, err
	}
	return c.base.Watch(ctx, key)
}

func (c wiredConn) Inspect(ctx context.Context, key string) (driver.Holder, bool, error) {
	if err := c.link.roundTrip(ctx); err != nil {
		return driver.Holder{}, false, err
	}
	return c.base.Inspect(ctx, key)
}

func (c wiredConn) Close() error {
	c.link.close()
	return c.base.Close()
}

// link is one connection to the echo server, dialed when first needed and
// again after it failed.
type link struct {
	dial driver.DialFunc
	addr string

	mu sync.Mutex
	c  net.Conn
}

// roundTrip sends a byte and reads it back, under ctx's deadline.
func (l *link) roundTrip(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.c == nil {
		c, err := l.dial(ctx, "tcp", l.addr)
		if err != nil {
			return fmt.Errorf("%w: %w", driver.ErrUnavailable, err)
		}
		l.c = c
	}
	deadline, _ := ctx.Deadline()
	l.c.SetDeadline(deadline)
	var b [1]byte
	_, err := l.c.Write(b[:])
	if err == nil {
		_, err = io.ReadFull(l.c, b[:])
	}
	if err != nil {
		l.c.Close()
		l.c = nil
		return fmt.Errorf("%w: %w", driver.ErrUnavailable, err)
	}
	return nil
}

func (l *link) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.c != nil {
		l.c.Close()
		l.c = nil
	}
}

// echoServer starts a server that echoes what each connection sends, and
// stops it when the test ends. It returns its address.
func echoServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = make(map[net.Conn]struct{})
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = struct{}{}
			mu.Unlock()
			wg.Go(func() {
				io.Copy(c, c)
				c.Close()
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// wiredHarness is the harness of the wired driver.
func wiredHarness(mode dialing) func(t *testing.T) conformance.Harness {
	return func(t *testing.T) conformance.Harness {
		d := wiredDriver{store: memory.New(), dialing: mode}
		addr := echoServer(t)
		open := func(t *testing.T, dial driver.DialFunc) *lock.Client {
			cn, err := d.OpenConnectorDialer(addr, dial)
			if err != nil {
				t.Fatal(err)
			}
			return lock.OpenConnector(cn)
		}
		return conformance.Harness{
			NewClient:       func(t *testing.T) *lock.Client { return open(t, nil) },
			NewDialerClient: open,
			Fencing:         true,
			Extend:          true,
			Wakeups:         true,
		}
	}
}
