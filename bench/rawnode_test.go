package bench

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/redlock"
	"github.com/distlock/lock/internal/resp"
)

// rawNode is a redlock.Node on one raw connection, a request at a time,
// the way the floor's workers talk to a server: no pool, no deadline,
// internal/resp's writer and reader. It exists to measure: ours over
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

var errRawArg = errors.New("rawNode: an argument neither a string nor an int64")

func (n *rawNode) Do(_ context.Context, args []any) (any, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	b := resp.AppendArray(n.buf[:0], len(args))
	for _, a := range args {
		switch v := a.(type) {
		case string:
			b = resp.AppendBulk(b, v)
		case int64:
			b = resp.AppendBulk(b, strconv.FormatInt(v, 10))
		default:
			return nil, errRawArg
		}
	}
	n.buf = b
	if _, err := n.c.Write(b); err != nil {
		return nil, err
	}
	return resp.ReadReply(n.r)
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
