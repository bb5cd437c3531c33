package bench

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/redlock"
)

// rawNode is a redlock.Node on one raw connection, a request at a time,
// the way the floor's workers talk to a server: no pool, no deadline, a
// RESP writer and reader of a few lines. It exists to measure: ours over
// it (oursraw in BenchmarkFloorPaired) against ours over a client tells
// the client's cost apart from the rounds'. It ignores its context, so a
// hung server hangs it; it is no driver.
type rawNode struct {
	addr string
	mu   sync.Mutex // one request at a time on the connection
	c    net.Conn
	r    *bufio.Reader
	buf  []byte
}

var errRawReply = errors.New("rawNode: a reply it does not read")

func (n *rawNode) Do(_ context.Context, args []any) (any, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	b := append(n.buf[:0], '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		var s string
		switch v := a.(type) {
		case string:
			s = v
		case int64:
			s = strconv.FormatInt(v, 10)
		default:
			return nil, errRawReply
		}
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, '\r', '\n')
		b = append(b, s...)
		b = append(b, '\r', '\n')
	}
	n.buf = b
	if _, err := n.c.Write(b); err != nil {
		return nil, err
	}
	line, err := n.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 {
		return nil, errRawReply
	}
	body := string(line[1 : len(line)-2])
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return nil, errors.New(body)
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		size, err := strconv.Atoi(body)
		if err != nil || size < 0 {
			return nil, err // $-1: a nil reply
		}
		p := make([]byte, size+2)
		if _, err := io.ReadFull(n.r, p); err != nil {
			return nil, err
		}
		return string(p[:size]), nil
	}
	return nil, errRawReply
}

func (n *rawNode) Subscribe(context.Context) (redlock.Subscriber, error) {
	return nil, errors.New("rawNode: no publish/subscribe")
}
func (n *rawNode) String() string { return n.addr }
func (n *rawNode) Close() error   { return n.c.Close() }

// newRawOurs opens ours over a rawNode per server at addrs, with
// quorum_first if qf is set.
func newRawOurs(t testing.TB, addrs []string, qf bool) impl {
	t.Helper()
	nodes := make([]redlock.Node, len(addrs))
	for i, a := range addrs {
		c, err := net.Dial("tcp", a)
		if err != nil {
			t.Fatal(err)
		}
		nodes[i] = &rawNode{addr: a, c: c, r: bufio.NewReader(c)}
	}
	cn, err := redlock.NewConnector(nodes, redlock.WithQuorumFirst(qf))
	if err != nil {
		t.Fatal(err)
	}
	return ours{lock.OpenConnector(cn)}
}
