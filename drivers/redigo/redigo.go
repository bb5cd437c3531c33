// Package redigo is the Redlock driver over redigo
// (github.com/gomodule/redigo), registered as "redigo". The algorithm, its
// guarantees and its advice on restarts are in package
// [github.com/distlock/lock/drivers/redlock].
//
//	import _ "github.com/distlock/lock/drivers/redigo"
//
//	c, err := lock.Open("redigo", "redis://10.0.0.1:6379,redis://10.0.0.2:6379,redis://10.0.0.3:6379")
//
// The DSN is a comma-separated list of redis:// or rediss:// (TLS) URLs,
// one per independent master, as redis.DialURL reads them: an optional
// user and password (a user alone is taken as the password), and an
// optional database number as the path. One URL is the single-instance
// lock. The algorithm's own parameters (node_timeout, fencing, key_prefix,
// quorum_first; see redlock.ParseDSN) may be added to any URL, and these to
// each URL, for its node:
//
//	dial_timeout       bounds a dial: TCP, TLS handshake, AUTH, SELECT (default 5s)
//	write_timeout      bounds the write of each command (default: none; see below)
//	max_idle_conns     idle connections kept by the pool (default 40 per GOMAXPROCS)
//	max_active_conns   connections open at once, 0 for no limit (the default)
//	idle_timeout       closes connections idle for longer (default 5m)
//	conn_max_lifetime  closes connections older than this (default: never)
//	client_name        the name given to CLIENT SETNAME
//	skip_verify        rediss only: true skips verifying the server's certificate
//	ca_file            rediss only: PEM file of the CAs that sign the server's certificate (default: the system's)
//
// An unknown parameter is an error. The DSN is parsed by lock.Open, so a
// malformed one fails there; no error ever quotes a URL, which may hold a
// password.
//
// Every command runs under the algorithm's per-node timeout (node_timeout):
// the connection is taken from the pool, and dialed if need be, under it,
// and the reply is awaited with the socket's read deadline set from it, so
// a hung node costs an operation no more than that long. (A command of a
// few hundred bytes fits in the socket's buffer, so its write does not wait
// for the node; write_timeout bounds it all the same.) Waiters for a
// release listen on one connection per node, dialed for the purpose and
// not pooled.
//
// A node that refuses the URL's credentials (a password where the server
// has none included), or that speaks TLS where the URL does not (or the
// other way round), fails an acquisition at once with an error matching
// lock.ErrMisconfigured.
//
// The driver takes a dialer (driver.DialerDriver): with lock.OpenDialer,
// every connection to a node, the waiters' ones included, is dialed by the
// caller's dial, and TLS runs over it.
//
// [New] takes pools you built.
package redigo

import (
	"context"
	"fmt"

	"github.com/gomodule/redigo/redis"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/redlock"
)

func init() {
	lock.Register("redigo", Driver{})
}

// Driver is the redigo driver, registered as "redigo".
type Driver struct{}

var _ driver.DialerDriver = Driver{}

// OpenConnector parses dsn; it does not contact the nodes.
func (d Driver) OpenConnector(dsn string) (driver.Connector, error) {
	return d.OpenConnectorDialer(dsn, nil)
}

// OpenConnectorDialer is OpenConnector, with every connection to a node
// dialed by dial (nil means net.Dialer's); TLS runs over it.
func (Driver) OpenConnectorDialer(dsn string, dial driver.DialFunc) (driver.Connector, error) {
	seen := make(map[string]int)
	return redlock.NewDSNConnector(dsn, func(i int, raw string) (func() redlock.Node, error) {
		e, err := parseURL(i, raw)
		if err != nil {
			return nil, err
		}
		e.netDial = dial
		if j, dup := seen[e.addr]; dup {
			return nil, fmt.Errorf("redigo: URLs #%d and #%d of the DSN are the same server %s: the nodes must be independent masters", j+1, i+1, e.addr)
		}
		seen[e.addr] = i
		return func() redlock.Node {
			return &node{pool: e.pool(), name: e.addr, dial: e.dialSubscriber, own: true}
		}, nil
	})
}

// New returns a connector over existing pools, one per independent
// master; pass it to lock.OpenConnector. The pools are not closed when the
// lock client is.
//
// Commands run on the pools' connections with redis.DoWithTimeout, the
// timeout being what is left of the node timeout, so those must implement
// redis.ConnWithTimeout (connections from redis.Dial and redis.DialURL
// do); the pools' Dial functions should honour their context (use
// DialContext), or a dial to a hung node is not bounded. Waiters for a release listen on a connection of
// their own per node, dialed with the pool's DialContext or Dial function:
// a read timeout set there makes an idle subscription reconnect at that
// pace, which costs its waiters a spurious wake-up each time.
func New(pools []*redis.Pool, opts ...redlock.Option) (driver.Connector, error) {
	nodes := make([]redlock.Node, len(pools))
	seen := make(map[*redis.Pool]int, len(pools))
	for i, p := range pools {
		if p == nil {
			return nil, fmt.Errorf("redigo: pool %d is nil", i)
		}
		if j, dup := seen[p]; dup {
			return nil, fmt.Errorf("redigo: pools %d and %d are the same pool: the nodes must be independent masters", j, i)
		}
		seen[p] = i
		var dial func(context.Context) (redis.Conn, error)
		switch {
		case p.DialContext != nil:
			dial = p.DialContext
		case p.Dial != nil:
			dial = func(context.Context) (redis.Conn, error) { return p.Dial() }
		default:
			return nil, fmt.Errorf("redigo: pool %d has neither DialContext nor Dial", i)
		}
		nodes[i] = &node{pool: p, name: fmt.Sprintf("pool %d", i), dial: dial}
	}
	return redlock.NewConnector(nodes, opts...)
}
