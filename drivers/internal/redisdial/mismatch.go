// Package redisdial watches a new connection to a Redis server until its
// first reply, to tell a TLS mismatch apart from a server that is down,
// for the drivers over go-redis and redigo.
package redisdial

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/distlock/lock/driver"
)

// A TLS mismatch between a URL and its server shows at the connection's
// first reply, but not as an error that says so: a Redis server that
// speaks TLS resets a plain connection at its first command, and one that
// speaks plain Redis never answers a TLS handshake (it waits for the end
// of a line that never comes). So a new connection is watched until its
// first reply, and at such a sign the server is asked again over a second
// connection in the other protocol, which it answers at once if that is
// its own (a server that is down or hung answers neither). The error then
// matches driver.ErrMisconfigured.

const (
	// probeAfter is how long a TLS handshake may go unanswered before the
	// server is asked in plain Redis.
	probeAfter = 100 * time.Millisecond

	// probeTimeout bounds a question in the other protocol.
	probeTimeout = 500 * time.Millisecond
)

const (
	errServerWantsTLS   mismatch = "the server speaks TLS and closed a plain connection: use a rediss:// URL"
	errServerWantsPlain mismatch = "the server speaks plain Redis and does not answer a TLS handshake: use a redis:// URL"
)

// mismatch is the error of a TLS mismatch. It matches
// driver.ErrMisconfigured without wrapping it: go-redis unwraps the
// error of a connection's first command once.
type mismatch string

func (m mismatch) Error() string        { return string(m) }
func (m mismatch) Is(target error) bool { return target == driver.ErrMisconfigured }

// firstReply is a new connection to addr, watched until the server's
// first reply (see errServerWantsTLS). If overTLS, it is the connection
// under a tls.Conn. It has no SyscallConn method.
type firstReply struct {
	net.Conn
	addr    string
	overTLS bool
	dial    driver.DialFunc // the probes' dial
	replied bool            // the server sent something: nothing more to watch (read on Read's goroutine only)
}

// WatchFirstReply returns c, a new connection to addr, watched until the
// server's first reply; overTLS if it will carry TLS. A sign of a TLS
// mismatch then makes the connection fail with an error that matches
// driver.ErrMisconfigured. The connections that ask the server in the
// other protocol are dialed by dial, the one that dialed c (nil means
// net.Dialer's).
func WatchFirstReply(c net.Conn, addr string, overTLS bool, dial driver.DialFunc) net.Conn {
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	return &firstReply{Conn: c, addr: addr, overTLS: overTLS, dial: dial}
}

func (c *firstReply) Read(p []byte) (int, error) {
	if c.replied {
		return c.Conn.Read(p)
	}
	var n int
	var err error
	if c.overTLS {
		n, err = c.readHandshake(p)
	} else {
		n, err = c.Conn.Read(p)
		if n == 0 && closedEarly(err) && speaksTLS(c.dial, c.addr) {
			err = errServerWantsTLS
		}
	}
	c.replied = n > 0
	return n, err
}

// readHandshake reads the server's first reply to a TLS handshake. If none
// comes within probeAfter, the server is asked in plain Redis meanwhile;
// if it answers there, the connection is closed, and the read fails with
// errServerWantsPlain.
func (c *firstReply) readHandshake(p []byte) (int, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var plain atomic.Bool
	probed := make(chan struct{})
	probe := time.AfterFunc(probeAfter, func() {
		defer close(probed)
		if speaksPlain(ctx, c.dial, c.addr) {
			plain.Store(true)
			c.Conn.Close() // ends the read
		}
	})
	n, err := c.Conn.Read(p)
	if !probe.Stop() {
		cancel()
		<-probed
	}
	if plain.Load() {
		return 0, errServerWantsPlain
	}
	return n, err
}

// closedEarly reports whether err is the server closing the connection.
func closedEarly(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}

// speaksTLS reports whether the server at addr answers a TLS handshake.
// The certificate is not verified: the handshake only asks the question,
// and nothing is sent over it.
func speaksTLS(dial driver.DialFunc, addr string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	nc, err := dial(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer nc.Close()
	c := tls.Client(nc, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // see above
	err = c.HandshakeContext(ctx)
	if err == nil {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error" // the server's TLS alert
}

// speaksPlain reports whether the server at addr answers an inline PING
// in plain Redis (a status or an error reply, such as NOAUTH), before ctx
// ends.
func speaksPlain(ctx context.Context, dial driver.DialFunc, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	c, err := dial(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	var b [1]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		return false
	}
	return b[0] == '+' || b[0] == '-'
}
