package conformance_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/memory"
)

// A small quorum driver over memory stores whose nodes can be killed, hung
// and restarted: enough of the Redlock idea to show that the suite's fault
// cases pass on a correct quorum driver and catch broken ones. The real
// Redlock lives in drivers/redlock and runs the same cases on redis-server.

type quorumConfig struct {
	nodes        int
	quorum       int           // zero: nodes/2+1
	nodeTimeout  time.Duration // zero: 150ms
	heldWhenDown bool          // broken: report ErrHeld when nodes are down
	waitAll      bool          // broken: wait for every node's answer
}

func quorumHarness(t *testing.T, cfg quorumConfig) conformance.Harness {
	if cfg.quorum == 0 {
		cfg.quorum = cfg.nodes/2 + 1
	}
	if cfg.nodeTimeout == 0 {
		cfg.nodeTimeout = 150 * time.Millisecond
	}
	q := &quorum{cfg: cfg}
	for range cfg.nodes {
		q.nodes = append(q.nodes, &node{store: memory.New()})
	}
	t.Cleanup(func() {
		for i := range q.nodes {
			q.Restart(t, i)
		}
	})
	return conformance.Harness{
		NewClient: func(t *testing.T) *lock.Client { return lock.OpenConnector(q) },
		Faults:    q,
		TTL:       time.Second,
	}
}

var errRefused = errors.New("connection refused")

type nodeState int

const (
	up nodeState = iota
	killed
	hung
)

type node struct {
	mu     sync.Mutex
	store  *memory.Store
	state  nodeState
	resume chan struct{} // closed when a hung node resumes
}

// conn waits as the node's state says, and returns a connection to its
// store. Only a hung node's wait honours ctx's deadline, the node timeout:
// a live node answers, as its store does at once. (Under ctx, a pause of
// the loaded process under -race timed out three live nodes of one
// release at once, and failed it, in make test; a longer node timeout
// made the intact driver's handoffs with nodes hung too slow for
// TestSuiteCatchesBrokenDrivers instead.)
func (n *node) conn(ctx context.Context) (driver.Conn, error) {
	n.mu.Lock()
	state, store, resume := n.state, n.store, n.resume
	n.mu.Unlock()
	switch state {
	case killed:
		return nil, errRefused
	case hung:
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-resume:
		}
	}
	return store.Connect(context.WithoutCancel(ctx))
}

type quorum struct {
	cfg   quorumConfig
	nodes []*node
}

// Faults.

func (q *quorum) Nodes() int { return len(q.nodes) }

func (q *quorum) Kill(t *testing.T, i int) {
	n := q.nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.state == hung {
		close(n.resume)
	}
	n.state = killed
}

func (q *quorum) Hang(t *testing.T, i int) {
	n := q.nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.state != hung {
		n.state, n.resume = hung, make(chan struct{})
	}
}

func (q *quorum) Restart(t *testing.T, i int) {
	n := q.nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	switch n.state {
	case killed:
		n.store = memory.New()
	case hung:
		close(n.resume)
	}
	n.state = up
}

// Connector.

func (q *quorum) Connect(context.Context) (driver.Conn, error) { return q, nil }
func (q *quorum) Driver() driver.Driver                        { return nil }
func (q *quorum) Close() error                                 { return nil }

// fanOut runs op on every node, each under the node timeout, and returns
// as soon as the outcome is known: nil once a quorum succeeded, notMine
// once enough nodes answered with it to make a quorum impossible, or
// another error once neither can happen. after runs on each node
// once its own op has ended and the outcome is known, with both results.
func (q *quorum) fanOut(ctx context.Context, notMine error, op func(context.Context, driver.Conn) error, after func(context.Context, driver.Conn, error, error)) error {
	results := make(chan error, len(q.nodes))
	decided := make(chan struct{})
	var outcome error
	for _, n := range q.nodes {
		go func() {
			nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), q.cfg.nodeTimeout)
			defer cancel()
			c, err := n.conn(nctx)
			if err == nil {
				err = op(context.WithoutCancel(nctx), c) // a live node answers (see node.conn)
			}
			results <- err
			if after != nil {
				<-decided
				if c != nil {
					after(context.WithoutCancel(ctx), c, err, outcome)
				}
			}
		}()
	}
	defer close(decided)
	ok, refused, failed := 0, 0, 0
	if q.cfg.waitAll {
		defer func() {
			for range len(q.nodes) - ok - refused - failed {
				<-results
			}
		}()
	}
	var last error
	lose := len(q.nodes) - q.cfg.quorum + 1
	for range q.nodes {
		err := <-results
		switch {
		case err == nil:
			ok++
		case errors.Is(err, notMine):
			refused++
		default:
			failed++
			last = err
		}
		switch {
		case ok >= q.cfg.quorum:
			return nil
		case refused >= lose:
			outcome = notMine
			return outcome
		case refused+failed >= lose && refused+len(q.nodes)-ok-refused-failed < lose:
			// A quorum is out of reach, and so is a quorum of refusals:
			// the nodes that failed decided it.
			if q.cfg.heldWhenDown {
				outcome = notMine
			} else {
				outcome = errors.Join(errors.New("quorum unreachable"), last)
			}
			return outcome
		}
	}
	panic("unreachable")
}

func (q *quorum) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	err := q.fanOut(ctx, driver.ErrHeld,
		func(ctx context.Context, c driver.Conn) error {
			_, err := c.Acquire(ctx, key, value, ttl)
			return err
		},
		func(ctx context.Context, c driver.Conn, mine, outcome error) {
			if outcome != nil && mine == nil {
				c.Release(ctx, key, value)
			}
		})
	return driver.Lease{}, err
}

func (q *quorum) Release(ctx context.Context, key, value string) error {
	return q.fanOut(ctx, driver.ErrNotHeld, func(ctx context.Context, c driver.Conn) error {
		return c.Release(ctx, key, value)
	}, nil)
}
