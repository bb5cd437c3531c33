package rueidis

import (
	"github.com/redis/rueidis"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/redlock"
)

func init() {
	lock.Register("rueidis", Driver{})
}

// Driver is the rueidis driver, registered as "rueidis".
type Driver struct{}

var _ driver.DialerDriver = Driver{}

// OpenConnector parses dsn; it does not contact the nodes.
func (Driver) OpenConnector(dsn string) (driver.Connector, error) { return library.OpenConnector(dsn) }

// OpenConnectorDialer is OpenConnector, with every connection to a node
// dialed by dial (nil means the client's own); TLS runs over it.
func (Driver) OpenConnectorDialer(dsn string, dial driver.DialFunc) (driver.Connector, error) {
	return library.OpenConnectorDialer(dsn, dial)
}

// New returns a connector over existing clients, one per independent
// master; pass it to lock.OpenConnector. The clients are not closed when
// the lock client is.
func New(clients []rueidis.Client, opts ...redlock.Option) (driver.Connector, error) {
	return library.New(clients, opts...)
}
