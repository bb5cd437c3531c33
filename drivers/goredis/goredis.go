// Package goredis is the Redlock driver over go-redis v9
// (github.com/redis/go-redis/v9), registered as "goredis". The algorithm,
// its guarantees and its advice on restarts are in package
// [github.com/distlock/lock/drivers/redlock].
//
//	import _ "github.com/distlock/lock/drivers/goredis"
//
//	c, err := lock.Open("goredis", "redis://10.0.0.1:6379,redis://10.0.0.2:6379,redis://10.0.0.3:6379")
//
// The DSN is a comma-separated list of redis:// or rediss:// (TLS) URLs,
// one per independent master, in go-redis's URL syntax (user, password,
// database number and go-redis options as query parameters). One URL is the
// single-instance lock. The algorithm's own parameters (node_timeout,
// fencing, key_prefix, quorum_first; see redlock.ParseDSN) may be added to any URL, and
// on a rediss:// URL ca_file names a PEM file of the CAs that sign the
// server's certificate (default: the system's).
//
// A node that refuses the URL's credentials, or that speaks TLS where the
// URL does not (or the other way round), fails an acquisition at once with
// an error matching lock.ErrMisconfigured. A password alone is sent as
// user default's, which a server without a password accepts.
//
// Clients built from a DSN respect context deadlines (so that the per-node
// timeout bounds every request) and make no retries of their own (the
// algorithm makes exactly one attempt per node per round), unless the URL
// sets max_retries. [New] takes clients you built, for instance failover or
// cluster clients; give them ContextTimeoutEnabled: true. redlock's Drop
// (driver.Dropper) refuses a cluster client or a ring given to New, whose
// keys one SCAN does not reach.
//
// A Redis Cluster is one node. Give [New] a *redis.ClusterClient per
// cluster. A cluster's masters share one keyspace, so one cluster is never
// N nodes, and it adds no safety to the node it is. Its replicas copy
// writes after the fact. A failover to a replica that missed a grant
// forgets the grant, as a restart would, and another client is then
// granted a key that is still held. With fencing tokens, that client's
// token repeats the holder's or goes below it. Appending and fsyncing
// every write (appendfsync always) does not help, since the replica never
// had the write. What keeps the lock is a quorum of clusters: with three
// clusters as the nodes of N=3, one cluster's failover loses the grant on
// one node, and the other two refuse the second client. Two failovers at
// once lose it again. TestCluster_failover shows each case; see "Redis
// Cluster as a node" in drivers/redlock's DESIGN.md.
//
// The driver takes a dialer (driver.DialerDriver): with lock.OpenDialer,
// every connection to a node, publish/subscribe ones included, is dialed
// by the caller's dial, and TLS runs over it.
package goredis

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/driver/dsn"
	"github.com/distlock/lock/drivers/internal/redisdial"
	"github.com/distlock/lock/drivers/internal/tlsfile"
	"github.com/distlock/lock/drivers/redlock"
)

func init() {
	lock.Register("goredis", Driver{})
}

// Driver is the goredis driver, registered as "goredis".
type Driver struct{}

var _ driver.DialerDriver = Driver{}

// OpenConnector parses dsn; it does not contact the nodes. It routes
// go-redis's process-wide log to slog.Default at debug level (see log.go).
func (d Driver) OpenConnector(dsn string) (driver.Connector, error) {
	return d.OpenConnectorDialer(dsn, nil)
}

// OpenConnectorDialer is OpenConnector, with every connection to a node
// dialed by dial (nil means net.Dialer's); TLS runs over it.
func (Driver) OpenConnectorDialer(dsn string, dial driver.DialFunc) (driver.Connector, error) {
	quiet()
	return redlock.NewDSNConnector(dsn, func(i int, raw string) (func() redlock.Node, error) {
		o, err := clientOptions(raw, dial)
		if err != nil {
			return nil, fmt.Errorf("goredis: URL #%d of the DSN: %w", i+1, err)
		}
		return func() redlock.Node { return &node{c: redis.NewClient(o), own: true} }, nil
	})
}

// paramCAFile names, on a rediss:// URL, a PEM file of the CAs that sign
// the server's certificate, trusted instead of the system's (go-redis's
// own URL syntax has no such parameter).
const paramCAFile = "ca_file"

// params are the parameters of a node's URL that go-redis does not know.
var params = dsn.Params{
	{Name: paramCAFile, Kind: dsn.File, Doc: "rediss only: PEM file of the CAs that sign the server's certificate (default: the system's)."},
}

// clientOptions returns the options of a client for one node's URL:
// go-redis parses it, once the driver's own parameters are out. Its
// connections are dialed by dial (nil means net.Dialer's).
func clientOptions(raw string, dial driver.DialFunc) (*redis.Options, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("malformed URL") // never quote it: it may hold a password
	}
	q := u.Query()
	p, err := params.Take(q)
	if err != nil {
		return nil, err
	}
	u.RawQuery = q.Encode()
	o, err := redis.ParseURL(u.String())
	if err != nil {
		return nil, err
	}
	if p.Has(paramCAFile) {
		if o.TLSConfig == nil {
			return nil, fmt.Errorf("parameter %s applies to rediss:// URLs only", paramCAFile)
		}
		pool, err := tlsfile.CertPool(p.String(paramCAFile))
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", paramCAFile, err)
		}
		o.TLSConfig.RootCAs = pool
	}
	o.ContextTimeoutEnabled = true
	// One attempt per request: the algorithm decides what to retry.
	if !q.Has("max_retries") {
		o.MaxRetries = -1
	}
	if !q.Has("dialer_retries") {
		o.DialerRetries = 1
	}
	o.Dialer = dialer(o, dial)
	return o, nil
}

// dialer dials the node's connections with dial (nil means a net.Dialer
// of o's dial timeout), with TLS if o says so, under the
// dial's context (go-redis's own TLS dialer does not follow it), and
// watches each until its first reply for a TLS mismatch (see
// redisdial.WatchFirstReply). Its plain connections hide their file descriptor
// from go-redis, which then skips the liveness probe it runs at every pool
// Get (a recvfrom system call and three allocations per command, as it
// already does for TLS connections). A connection that died while idle
// then fails its next command: one node's error in one round, which the
// quorum absorbs and the next attempt does not see.
func dialer(o *redis.Options, dial driver.DialFunc) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if dial == nil {
		dial = (&net.Dialer{Timeout: o.DialTimeout, KeepAlive: 5 * time.Minute}).DialContext
	} else if o.DialTimeout > 0 {
		dial = withTimeout(dial, o.DialTimeout)
	}
	cfg := o.TLSConfig
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		w := redisdial.WatchFirstReply(c, addr, cfg != nil, dial)
		if cfg == nil {
			return w, nil
		}
		conf := cfg
		if conf.ServerName == "" && !conf.InsecureSkipVerify {
			conf = conf.Clone()
			conf.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(w, conf)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		return tc, nil
	}
}

// withTimeout is dial, bounded by timeout as a net.Dialer's Timeout
// bounds its dials.
func withTimeout(dial driver.DialFunc, timeout time.Duration) driver.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return dial(ctx, network, addr)
	}
}

// New returns a connector over existing clients, one per independent
// master; pass it to lock.OpenConnector. The clients are not closed when
// the lock client is. A *redis.Client, *redis.ClusterClient or failover
// client must have ContextTimeoutEnabled set: without it go-redis ignores
// context deadlines, and a hung node would hold every operation up for the
// client's ReadTimeout.
func New(clients []redis.UniversalClient, opts ...redlock.Option) (driver.Connector, error) {
	nodes := make([]redlock.Node, len(clients))
	for i, c := range clients {
		if c == nil {
			return nil, fmt.Errorf("goredis: client %d is nil", i)
		}
		if !respectsDeadlines(c) {
			return nil, fmt.Errorf("goredis: client %d (%s) does not have ContextTimeoutEnabled set, so the per-node timeout could not bound it", i, name(c))
		}
		nodes[i] = &node{c: c}
	}
	return redlock.NewConnector(nodes, opts...)
}

func respectsDeadlines(c redis.UniversalClient) bool {
	switch c := c.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		return c.Options().ContextTimeoutEnabled
	}
	return true // a wrapper: trust it
}

// name is a client's address, without credentials.
func name(c redis.UniversalClient) string {
	switch c := c.(type) {
	case *redis.Client:
		return c.Options().Addr
	case *redis.ClusterClient:
		return "cluster(" + strings.Join(c.Options().Addrs, ",") + ")"
	}
	return fmt.Sprintf("%T@%p", c, c)
}

// node is a redlock.Node over a go-redis client.
type node struct {
	c   redis.UniversalClient
	own bool // the node closes the client
}

var (
	_ redlock.Node    = (*node)(nil)
	_ redlock.Sharded = (*node)(nil)
)

// Sharded reports whether the client spreads keys over servers (a cluster
// client or a ring), which one SCAN does not cover: redlock's Drop
// refuses such a node.
func (n *node) Sharded() bool {
	switch n.c.(type) {
	case *redis.ClusterClient, *redis.Ring:
		return true
	}
	return false
}

func (n *node) Do(ctx context.Context, args []any) (any, error) {
	v, err := n.c.Do(ctx, args...).Result()
	if err == redis.Nil {
		return nil, nil
	}
	return v, err
}

func (n *node) Subscribe(ctx context.Context) (redlock.Subscriber, error) {
	return pubsub{n.c.Subscribe(ctx)}, nil
}

func (n *node) String() string { return name(n.c) }

// GoString is String, so that %#v shows no password either.
func (n *node) GoString() string { return n.String() }

func (n *node) Close() error {
	if n.own {
		return n.c.Close()
	}
	return nil
}

// pubsub is a redlock.Subscriber over a go-redis PubSub.
type pubsub struct{ ps *redis.PubSub }

func (p pubsub) Subscribe(ctx context.Context, ch string) error   { return p.ps.Subscribe(ctx, ch) }
func (p pubsub) Unsubscribe(ctx context.Context, ch string) error { return p.ps.Unsubscribe(ctx, ch) }
func (p pubsub) Close() error                                     { return p.ps.Close() }

func (p pubsub) Receive(ctx context.Context) (redlock.Event, error) {
	msg, err := p.ps.Receive(ctx)
	if err != nil {
		return redlock.Event{}, err
	}
	switch m := msg.(type) {
	case *redis.Message:
		return redlock.Event{Kind: redlock.Message, Channel: m.Channel, Payload: m.Payload}, nil
	case *redis.Subscription:
		if m.Kind == "subscribe" {
			return redlock.Event{Kind: redlock.Subscribed, Channel: m.Channel}, nil
		}
	}
	return redlock.Event{}, nil
}
