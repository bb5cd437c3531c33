package rueidis

import (
	"iter"
	"maps"

	"github.com/redis/rueidis"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/internal/pipenode"
	"github.com/distlock/lock/drivers/redlock"
)

func init() {
	lock.Register("rueidis", Driver{})
}

// Driver is the rueidis driver, registered as "rueidis".
type Driver struct{}

// OpenConnector parses dsn; it does not contact the nodes.
func (Driver) OpenConnector(dsn string) (driver.Connector, error) {
	return pipenode.OpenConnector("rueidis", dsn, opener)
}

// opener parses a node's URL into the options of its client.
func opener(u pipenode.URL) (func() (pipenode.Client, error), error) {
	o, err := rueidis.ParseURL(u.Raw)
	if err != nil {
		return nil, err
	}
	if u.RootCAs != nil {
		o.TLSConfig.RootCAs = u.RootCAs
	}
	o.DialCtxFn = pipenode.Dial
	o.DisableRetry = true      // one attempt per request: the algorithm decides what to retry
	o.DisableCache = true      // no CLIENT TRACKING: the node reads nothing twice
	o.ForceSingleClient = true // a URL is one server: no CLUSTER SLOTS probe
	return func() (pipenode.Client, error) {
		c, err := rueidis.NewClient(o)
		if err != nil {
			return nil, err
		}
		return client{c}, nil
	}, nil
}

// New returns a connector over existing clients, one per independent
// master; pass it to lock.OpenConnector. The clients are not closed when
// the lock client is.
func New(clients []rueidis.Client, opts ...redlock.Option) (driver.Connector, error) {
	return pipenode.NewConnector("rueidis", clients, wrap, addrs, opts...)
}

func wrap(c rueidis.Client) pipenode.Client { return client{c} }

func addrs(c rueidis.Client) iter.Seq[string] { return maps.Keys(c.Nodes()) }
