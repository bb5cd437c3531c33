package redistest

import (
	"context"
	"testing"
	"time"

	"github.com/distlock/lock/drivers/redlock"
)

// HungNode checks what redlock relies on from a Node when its server
// hangs (SIGSTOP: it accepts connections and answers nothing): a command
// returns by its context's deadline, on a pooled connection and on one
// dialed for it, with an error that redlock's breaker counts as a timeout
// (redlock.IsTimeout). The server stays hung until the test ends.
//
// It hangs the first server of set, whose lock the test's package must
// hold (see Set.Lock): a hung server of the other set would stall the
// packages that hold its lock. newNode returns a Node over that server,
// with no connection made yet. pooled, if not nil, checks that a command
// left the Node a pooled connection, before the server hangs.
func HungNode(t *testing.T, set Set, newNode func(t *testing.T) redlock.Node, pooled func(t *testing.T, n redlock.Node)) {
	t.Helper()
	const timeout = 100 * time.Millisecond
	const slack = 250 * time.Millisecond // scheduling on a loaded machine
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	warm, cold := newNode(t), newNode(t)
	if _, err := warm.Do(ctx, []any{"PING"}); err != nil { // leaves a pooled connection
		t.Fatal(err)
	}
	if pooled != nil {
		pooled(t, warm)
	}
	faults := set.Faults(t, 1)
	t.Cleanup(func() { faults.Restart(t, 0) })
	faults.Hang(t, 0)

	for _, c := range []struct {
		name string
		n    redlock.Node
	}{{"pooled connection", warm}, {"new connection", cold}} {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		start := time.Now()
		_, err := c.n.Do(cctx, []any{"SET", "redistest:hung", "v", "PX", int64(1000)})
		took := time.Since(start)
		cancel()
		t.Logf("%s: %v after %v", c.name, err, took)
		if !redlock.IsTimeout(err) {
			t.Errorf("%s: SET on a hung server = %v, want a timeout", c.name, err)
		}
		if took > timeout+slack {
			t.Errorf("%s: SET took %v on a hung server, with a %v timeout", c.name, took, timeout)
		}
	}
}

// HungURLNode is HungNode on set's first server, through the nodes that
// node makes of a DSN's URL, as a driver makes them.
func HungURLNode(t *testing.T, set Set, node func(url string) (redlock.Node, error)) {
	t.Helper()
	addr := set.Addrs(t)[0]
	HungNode(t, set, func(t *testing.T) redlock.Node {
		n, err := node("redis://" + addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		return n
	}, nil)
}
