// Package netfault is a dialer whose connections a test or a tool can
// break on demand: reset them all at once, or slow every write. It sits
// below a client library, through the drivers' dialer hook
// (driver.DialerDriver), so it reaches every connection the library
// opens, to servers it discovers too, and works under TLS, which the
// library puts on top. 'distlock verify' deals its connection faults
// with it, in its own worker processes only.
package netfault

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Dialer dials TCP connections that it can reset and slow. The zero
// value is ready to use. It is safe for concurrent use.
type Dialer struct {
	d     net.Dialer
	delay atomic.Int64 // of each read and write, in nanoseconds

	mu    sync.Mutex
	conns map[*conn]struct{}
}

// Dial dials addr, as net.Dialer.DialContext does, and keeps the
// connection until it is closed. It has the signature of
// driver.DialFunc.
func (d *Dialer) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	nc, err := d.d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c := &conn{Conn: nc, d: d}
	d.mu.Lock()
	if d.conns == nil {
		d.conns = make(map[*conn]struct{})
	}
	d.conns[c] = struct{}{}
	d.mu.Unlock()
	return c, nil
}

// Reset closes every open connection at once, with a TCP reset where it
// can (SO_LINGER 0), as a middlebox that drops a connection does, and
// returns how many it closed. Calls in flight on them fail; the client
// library dials again.
func (d *Dialer) Reset() int {
	d.mu.Lock()
	conns := make([]*conn, 0, len(d.conns))
	for c := range d.conns {
		conns = append(conns, c)
	}
	d.mu.Unlock()
	for _, c := range conns {
		if tc, ok := c.Conn.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		c.Close()
	}
	return len(conns)
}

// Slow makes every read and write on every connection, open or dialed
// later, wait delay first, until Slow(0). A request then reaches its
// server delay late, and its reply is read delay late, as over a slow
// link: a client that counted a lease from the reply, not from the
// request, would believe it valid longer than the server keeps it.
func (d *Dialer) Slow(delay time.Duration) { d.delay.Store(int64(max(delay, 0))) }

// Open returns how many connections are open.
func (d *Dialer) Open() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.conns)
}

// conn is a connection of a Dialer.
type conn struct {
	net.Conn
	d    *Dialer
	once sync.Once
}

// Read waits the Dialer's delay, then reads.
func (c *conn) Read(b []byte) (int, error) {
	c.wait()
	return c.Conn.Read(b)
}

// Write waits the Dialer's delay, then writes.
func (c *conn) Write(b []byte) (int, error) {
	c.wait()
	return c.Conn.Write(b)
}

func (c *conn) wait() {
	if delay := time.Duration(c.d.delay.Load()); delay > 0 {
		time.Sleep(delay)
	}
}

// Close closes the connection and forgets it.
func (c *conn) Close() error {
	c.once.Do(func() {
		c.d.mu.Lock()
		delete(c.d.conns, c)
		c.d.mu.Unlock()
	})
	return c.Conn.Close()
}
