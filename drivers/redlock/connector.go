package redlock

import (
	"context"

	"github.com/distlock/lock/driver"
)

// A connector opens connections that run the algorithm: the
// driver.Connector that the Redis drivers return, from a DSN and from
// their New.
type connector struct {
	nodes func() []Node // the nodes of one connection
	cfg   config
}

// NewConnector returns a driver.Connector (for lock.OpenConnector) whose
// connections all run the algorithm over nodes. Closing a connection calls
// every node's Close, so nodes that wrap clients the caller keeps must
// leave those open. The nodes and options are checked here.
func NewConnector(nodes []Node, opts ...Option) (driver.Connector, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if err := checkNodes(nodes); err != nil {
		return nil, err
	}
	return &connector{nodes: func() []Node { return nodes }, cfg: cfg}, nil
}

// NewConnectorFunc returns a driver.Connector (for lock.OpenConnector)
// whose every connection runs the algorithm over nodes of its own, made by
// newNodes when it connects and closed when it is closed. The options are
// checked here, the nodes at each connection.
func NewConnectorFunc(newNodes func() []Node, opts ...Option) (driver.Connector, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return &connector{nodes: newNodes, cfg: cfg}, nil
}

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
// repeat the URL, which may hold a password.
func NewDSNConnector(dsn string, parseURL func(i int, url string) (newNode func() Node, err error)) (driver.Connector, error) {
	urls, opts, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	makers := make([]func() Node, len(urls))
	for i, u := range urls {
		if makers[i], err = parseURL(i, u); err != nil {
			return nil, err
		}
	}
	return NewConnectorFunc(func() []Node {
		nodes := make([]Node, len(makers))
		for i, newNode := range makers {
			nodes[i] = newNode()
		}
		return nodes
	}, opts...)
}
