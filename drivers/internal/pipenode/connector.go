package pipenode

import (
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/redlock"
)

// NewConnector returns a connector over clients the caller owns, one per
// independent master, for the driver registered as name: wrap presents
// one to this package, and addrs lists the addresses it connects to.
func NewConnector[C comparable](name string, clients []C, wrap func(C) Client, addrs func(C) iter.Seq[string], opts ...redlock.Option) (driver.Connector, error) {
	nodes := make([]redlock.Node, len(clients))
	var zero C
	for i, c := range clients {
		if c == zero {
			return nil, fmt.Errorf("%s: client %d is nil", name, i)
		}
		nodes[i] = New(wrap(c), fmt.Sprintf("client %d (%s)", i, strings.Join(slices.Sorted(addrs(c)), ",")))
	}
	return redlock.NewConnector(nodes, opts...)
}
