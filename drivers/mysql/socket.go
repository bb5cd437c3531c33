package mysql

import (
	"context"
	"net"
	"sync"
	"syscall"

	"github.com/distlock/lock/driver"
)

// sockets are the network connections of a pool that the driver opened
// from a DSN, dialed through it so that Close can close them. Closing a
// socket ends the call in flight on it at once, whatever its context.
// That is what lets a call under a context that cannot end
// (context.Background()) skip the context that go-sql-driver would watch:
// the pool's socket deadlines (readTimeout and writeTimeout of the request
// timeout) bound it instead. See "Failures and timeouts" in DESIGN.md.
type sockets struct {
	dial driver.DialFunc // the caller's; nil means net.Dialer's

	mu     sync.Mutex
	open   map[*socket]struct{}
	closed bool
}

func newSockets(dial driver.DialFunc) *sockets {
	return &sockets{dial: dial, open: make(map[*socket]struct{})}
}

// dialContext dials addr as go-sql-driver would (with keep-alives on TCP),
// or through the caller's dial, and keeps the connection until it closes.
func (s *sockets) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var (
		nc  net.Conn
		err error
	)
	if s.dial != nil {
		nc, err = s.dial(ctx, network, addr)
	} else {
		var d net.Dialer
		nc, err = d.DialContext(ctx, network, addr)
	}
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetKeepAlive(true) // as go-sql-driver does for the connections it dials
	}
	sk := &socket{Conn: nc, s: s}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		nc.Close()
		return nil, errClosed
	}
	s.open[sk] = struct{}{}
	if _, ok := nc.(syscall.Conn); ok {
		// go-sql-driver checks an idle connection's liveness through it.
		return rawSocket{sk}, nil
	}
	return sk, nil
}

// close closes every socket open and refuses new ones, ending the calls in
// flight on them. Close the pool's idle connections first: they then say
// goodbye to the server, where a socket closed under go-sql-driver makes
// it log the failure.
func (s *sockets) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for sk := range s.open {
		sk.closed = true
		sk.Conn.Close()
	}
}

// isClosed reports whether close was called.
func (s *sockets) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// socket is one network connection of the pool.
type socket struct {
	net.Conn
	s      *sockets
	closed bool // closed already, by Close or sockets.close; guarded by s.mu
}

// Close closes the socket, once: go-sql-driver closes a socket that
// sockets.close closed already, and would log the second close's error.
func (sk *socket) Close() error {
	sk.s.mu.Lock()
	delete(sk.s.open, sk)
	closed := sk.closed
	sk.closed = true
	sk.s.mu.Unlock()
	if closed {
		return nil
	}
	return sk.Conn.Close()
}

// rawSocket is a socket whose connection has a file descriptor.
type rawSocket struct{ *socket }

func (r rawSocket) SyscallConn() (syscall.RawConn, error) {
	return r.Conn.(syscall.Conn).SyscallConn()
}
