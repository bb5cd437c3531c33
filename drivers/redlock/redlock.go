package redlock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/distlock/lock/driver"
)

const (
	// DefaultNodeTimeout is the least per-node timeout the adaptive
	// timeout takes (see WithNodeTimeout). The Redis document suggests
	// 5-50ms for a 10s TTL; we take the top of that range, which a healthy
	// node on a LAN answers well within, so that a hung node costs an
	// operation at most this long there.
	DefaultNodeTimeout = 50 * time.Millisecond

	// DefaultKeyPrefix is put before every key stored in Redis.
	DefaultKeyPrefix = "distlock:"

	// MaxNodes is the largest number of nodes supported.
	MaxNodes = 64

	// cleanupTimeout bounds the release that undoes a failed acquisition
	// on one node.
	cleanupTimeout = time.Second
)

type config struct {
	nodeTimeout  time.Duration // fixed; 0: adaptive (see roundTimeout)
	fixedTimeout bool          // WithNodeTimeout was given
	fencing      bool
	prefix       string
	quorumFirst  bool
}

// An Option configures a [Redlock].
type Option func(*config)

// WithNodeTimeout sets a fixed timeout for each request to one node. It
// must be positive; keep it small against the TTLs in use, since an
// acquisition may take that long. By default the timeout adapts to the
// nodes' round trips, as TCP's does (3 smoothed round trips and 4 of their
// variations, of the slowest node), between [DefaultNodeTimeout] and
// [MaxNodeTimeout] (and at most a quarter of the TTL for acquisitions and
// extensions); before a node's first answer it is the most, and after a
// timeout it doubles, until the node answers again. So the same
// defaults work on a LAN and on links of a few hundred milliseconds, and a
// round never waits for a slow or dead minority: it decides at the
// quorum's verdict.
//
// With several nodes, the timeout, fixed or not, gives up only the nodes
// that seem hung: silent past it while another node answered the round,
// and answering no other request either. Nodes that are slow together (a
// saturated machine, where the client cannot read their answers in time)
// are waited for up to MaxNodeTimeout (and a quarter of the TTL), or the
// timeout if it is longer. A single node is bounded by the timeout alone.
func WithNodeTimeout(d time.Duration) Option {
	return func(c *config) { c.nodeTimeout, c.fixedTimeout = d, true }
}

// WithFencing turns fencing tokens on or off (default off). See the
// package documentation for what they cost and guarantee, and "Fencing
// tokens" in DESIGN.md for how they work.
func WithFencing(on bool) Option { return func(c *config) { c.fencing = on } }

// WithKeyPrefix sets the prefix of every key stored in Redis (default
// [DefaultKeyPrefix]). Clients that should contend must use the same
// prefix. On a Redis Cluster, keep braces out of it: a '{' makes the hash
// tag the prefix's, which puts every lock in one slot, and a '{' right
// before a '}' empties it, so that the cluster refuses fencing tokens and
// Inspect (CROSSSLOT).
func WithKeyPrefix(p string) Option { return func(c *config) { c.prefix = p } }

// WithQuorumFirst has acquisitions ask a quorum of nodes first (default
// off: every node at once, as the Redis document's algorithm does): the
// key's first healthy nodes in rendezvous order, and the others only if
// those cannot decide, or have not within the round trip expected of them.
// Extensions and releases then ask only the nodes their acquisition
// asked. At N=5 an uncontended acquire and release is 6 requests instead
// of 10, which on servers and clients short of CPU is most of the cost:
// with 16 goroutines on two cores, 1.4-1.7x the throughput of asking
// every node.
//
// The price: such a lock is held on a bare quorum, where asking every
// node usually leaves it on all of them. Safety rests on the quorum in
// both cases, and so on nodes that do not lose keys before their TTL; but
// a node that does (restarted empty without the delayed restart, or
// failed over to a replica that missed the write) then breaks most locks
// held there, where it breaks a few otherwise. Use it with the delayed
// restart or appendfsync always, and see "A quorum first" in DESIGN.md.
func WithQuorumFirst(on bool) Option { return func(c *config) { c.quorumFirst = on } }

// Redlock is the algorithm over a set of nodes. It implements
// [driver.Conn] with [driver.Extender], [driver.Waiter], [driver.Pinger]
// and [driver.Inspector]. It is safe for concurrent use.
type Redlock struct {
	nodes     []Node
	cfg       config
	health    []health  // by node: its breaker and adaptive timeout
	seeds     []uint64  // by node: the hash of its name, for lead
	epoch     time.Time // the health's clock starts here
	subs      *subscriptions
	workers   *workers
	attempts  attempts           // acquisitions whose requests are still out
	leftovers leftovers          // released values that nodes may still hold
	sparse    byLease            // granted values that some nodes were never asked for
	lateSets  byLease            // granted values whose SETs on some nodes got no answer (see acquireRound.afterAll)
	timers    timers             // for the rounds' watchmen
	skipped   []skipped          // by node: releases its open breaker held back
	bgctx     context.Context    // ends at Close: for the sending of skipped releases
	bgcancel  context.CancelFunc // ends bgctx
	bg        sync.WaitGroup     // goroutines sending skipped releases
}

var (
	_ driver.Conn     = (*Redlock)(nil)
	_ driver.Extender = (*Redlock)(nil)
	_ driver.Waiter   = (*Redlock)(nil)
	_ driver.Pinger   = (*Redlock)(nil)
)

// New returns the algorithm over nodes, which must be independent masters:
// the same node (by its String) twice is refused. Closing it closes the
// nodes. To plug nodes into package lock, use [NewConnector] or
// [NewConnectorFunc] instead.
func New(nodes []Node, opts ...Option) (*Redlock, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if err := checkNodes(nodes); err != nil {
		return nil, err
	}
	return newRedlock(nodes, cfg), nil
}

// newConfig applies opts to the defaults and checks the result.
func newConfig(opts []Option) (config, error) {
	cfg := config{prefix: DefaultKeyPrefix}
	for _, o := range opts {
		if o == nil {
			return cfg, errors.New("redlock: nil Option")
		}
		o(&cfg)
	}
	if cfg.nodeTimeout < 0 || cfg.nodeTimeout == 0 && cfg.fixedTimeout {
		return cfg, fmt.Errorf("redlock: node timeout %v is not positive", cfg.nodeTimeout)
	}
	return cfg, nil
}

// checkNodes checks that nodes is a usable set of independent masters.
func checkNodes(nodes []Node) error {
	switch {
	case len(nodes) == 0:
		return errors.New("redlock: no nodes")
	case len(nodes) > MaxNodes:
		return fmt.Errorf("redlock: %d nodes, over the maximum of %d", len(nodes), MaxNodes)
	}
	seen := make(map[string]bool, len(nodes))
	for i, n := range nodes {
		if n == nil {
			return fmt.Errorf("redlock: node %d is nil", i)
		}
		name := n.String()
		if seen[name] {
			return fmt.Errorf("redlock: node %s is listed twice: the nodes must be independent masters", name)
		}
		seen[name] = true
	}
	return nil
}

// newRedlock returns the algorithm over nodes, which checkNodes has
// checked, with cfg.
func newRedlock(nodes []Node, cfg config) *Redlock {
	r := &Redlock{nodes: nodes, cfg: cfg, health: newHealth(len(nodes)), epoch: time.Now(), attempts: newAttempts()}
	r.seeds = make([]uint64, len(nodes))
	for i, n := range nodes {
		r.seeds[i] = fnv64(n.String())
	}
	r.subs = newSubscriptions(r)
	r.workers = newWorkers(len(nodes))
	r.skipped = make([]skipped, len(nodes))
	r.bgctx, r.bgcancel = context.WithCancel(context.Background())
	return r
}

// Nodes returns the number of nodes.
func (r *Redlock) Nodes() int { return len(r.nodes) }

// String describes r: its nodes, by their String, and its parameters,
// never a password.
func (r *Redlock) String() string { return describe(nodeNames(r.nodes), r.cfg) }

// GoString is String, so that %#v shows no password either.
func (r *Redlock) GoString() string { return r.String() }

// lockKey returns the name of key's lock: the prefix, then key in braces,
// the Redis Cluster hash tag that puts the lock and its counter (fenceKey)
// in one slot, as the scripts that touch both need. A key that starts
// with '}' would leave the tag empty, and each name would be hashed whole,
// to slots apart (CROSSSLOT): its tag starts with a NUL, which no key
// holds, so that the names stay distinct.
func (r *Redlock) lockKey(key string) string {
	if strings.HasPrefix(key, "}") {
		return r.cfg.prefix + "{\x00" + key + "}"
	}
	return r.cfg.prefix + "{" + key + "}"
}

// fenceKey returns the name of the fencing counter of the lock named lk.
func (r *Redlock) fenceKey(lk string) string { return lk + ":fence" }

// channel returns the channel on which releases of key are announced.
func (r *Redlock) channel(key string) string { return r.cfg.prefix + "{" + key + "}:released" }

func millis(d time.Duration) int64 { return int64((d + time.Millisecond - 1) / time.Millisecond) }

// Close stops the subscriptions and closes the nodes.
func (r *Redlock) Close() error {
	r.subs.close()
	r.workers.close()
	r.stopSending()
	var errs []error
	for _, n := range r.nodes {
		if err := n.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
