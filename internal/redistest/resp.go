package redistest

import (
	"bufio"
	"net"
	"time"

	"github.com/distlock/lock/internal/resp"
)

// respConn is the smallest Redis client the helpers need: one command at
// a time over RESP2, so that this package imports no Redis client library
// and the driver modules that use it pull in none beyond their own.
type respConn struct {
	c net.Conn
	r *bufio.Reader
}

func dialRESP(addr string) (*respConn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &respConn{c: c, r: bufio.NewReader(c)}, nil
}

func (rc *respConn) Close() error { return rc.c.Close() }

// do sends args as a command and returns its reply: a string, an int64,
// a []any, nil, or an error for a Redis error reply.
func (rc *respConn) do(args ...string) (any, error) {
	rc.c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := rc.c.Write(resp.AppendCommand(nil, args...)); err != nil {
		return nil, err
	}
	return resp.ReadReply(rc.r)
}
