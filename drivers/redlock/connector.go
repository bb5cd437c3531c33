package redlock

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/distlock/lock/driver"
)

// A connector opens connections that run the algorithm: the
// driver.Connector that the Redis drivers return, from a DSN and from
// their New.
type connector struct {
	nodes func() []Node // the nodes of one connection
	names []string      // the nodes' names, for String; nil if unknown
	cfg   config
}

// NewConnector returns a driver.Connector (for lock.OpenConnector) whose
// connections all run the algorithm over nodes. Closing a connection calls
// every node's Close, so nodes that wrap clients the caller keeps must
// leave those open. The nodes and options are checked here.
func NewConnector(nodes []Node, opts ...Option) (driver.Connector, error) {
	c, err := newConnector(func() []Node { return nodes }, opts)
	if err != nil {
		return nil, err
	}
	if err := checkNodes(nodes); err != nil {
		return nil, err
	}
	c.names = nodeNames(nodes)
	return c, nil
}

// NewConnectorFunc returns a driver.Connector (for lock.OpenConnector)
// whose every connection runs the algorithm over nodes of its own, made by
// newNodes when it connects and closed when it is closed. The options are
// checked here, the nodes at each connection.
func NewConnectorFunc(newNodes func() []Node, opts ...Option) (driver.Connector, error) {
	c, err := newConnector(newNodes, opts)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func newConnector(newNodes func() []Node, opts []Option) (*connector, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return &connector{nodes: newNodes, cfg: cfg}, nil
}

// String describes the connector: its nodes, by their addresses, and its
// parameters, never a password.
func (c *connector) String() string { return describe(c.names, c.cfg) }

// GoString is String, so that %#v shows no password either.
func (c *connector) GoString() string { return c.String() }

// Connect returns a Redlock over the connector's nodes.
func (c *connector) Connect(context.Context) (driver.Conn, error) {
	nodes := c.nodes()
	if err := checkNodes(nodes); err != nil {
		for _, n := range nodes {
			if n != nil {
				n.Close()
			}
		}
		return nil, err
	}
	return newRedlock(nodes, c.cfg), nil
}

// NewDSNConnector returns the driver.Connector of a Redis driver's DSN,
// a comma-separated list of node URLs with the algorithm's parameters
// (see [ParseDSN]): parseURL turns the i-th URL (counting from 0) into a
// function that makes a node of its own for each connection, which closes
// it. The errors of parseURL are returned as they are; they must not
// repeat the URL, which may hold a password. The connector's String names
// the nodes by their URLs' host:port (localhost and 6379 by default).
func NewDSNConnector(dsn string, parseURL func(i int, url string) (newNode func() Node, err error)) (driver.Connector, error) {
	urls, opts, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	makers := make([]func() Node, len(urls))
	names := make([]string, len(urls))
	for i, u := range urls {
		if makers[i], err = parseURL(i, u); err != nil {
			return nil, err
		}
		names[i] = URLAddr(u)
	}
	c, err := newConnector(func() []Node {
		nodes := make([]Node, len(makers))
		for i, newNode := range makers {
			nodes[i] = newNode()
		}
		return nodes
	}, opts)
	if err != nil {
		return nil, err
	}
	c.names = names
	return c, nil
}

// nodeNames returns the names of nodes, which checkNodes has checked.
func nodeNames(nodes []Node) []string {
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.String()
	}
	return names
}

// describe is the String of a connector or a Redlock over nodes with
// names (nil if they are made at each connection) and cfg, such as
// "redlock(3 nodes: 10.0.0.1:6379, 10.0.0.2:6379, 10.0.0.3:6379;
// node_timeout=50ms fencing=false key_prefix=distlock:)".
func describe(names []string, cfg config) string {
	var b strings.Builder
	b.WriteString("redlock(")
	switch {
	case names == nil:
		b.WriteString("nodes made at each connection")
	case len(names) == 1:
		b.WriteString("1 node: " + names[0])
	default:
		fmt.Fprintf(&b, "%d nodes: %s", len(names), strings.Join(names, ", "))
	}
	timeout := "adaptive"
	if cfg.nodeTimeout > 0 {
		timeout = cfg.nodeTimeout.String()
	}
	fmt.Fprintf(&b, "; node_timeout=%s fencing=%t key_prefix=%s)", timeout, cfg.fencing, quoteIfNeeded(cfg.prefix))
	return b.String()
}

// quoteIfNeeded quotes s if it is empty, or holds a space, ';', ')' or
// anything that strconv.Quote would escape.
func quoteIfNeeded(s string) string {
	if q := strconv.Quote(s); s == "" || q[1:len(q)-1] != s || strings.ContainsAny(s, " ;)") {
		return q
	}
	return s
}
