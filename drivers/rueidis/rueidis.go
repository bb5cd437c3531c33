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

// OpenConnector parses dsn; it does not contact the nodes.
func (Driver) OpenConnector(dsn string) (driver.Connector, error) { return library.OpenConnector(dsn) }

// New returns a connector over existing clients, one per independent
// master; pass it to lock.OpenConnector. The clients are not closed when
// the lock client is.
func New(clients []rueidis.Client, opts ...redlock.Option) (driver.Connector, error) {
	return library.New(clients, opts...)
}
