package valkey

import (
	"github.com/valkey-io/valkey-go"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/redlock"
)

func init() {
	lock.Register("valkey", Driver{})
}

// Driver is the valkey driver, registered as "valkey".
type Driver struct{}

var _ driver.DialerDriver = Driver{}

// OpenConnector parses dsn; it does not contact the nodes.
func (Driver) OpenConnector(dsn string) (driver.Connector, error) { return library.OpenConnector(dsn) }

// OpenConnectorDialer is OpenConnector, with every connection to a node
// dialed by dial (nil means the client's own); TLS runs over it.
func (Driver) OpenConnectorDialer(dsn string, dial driver.DialFunc) (driver.Connector, error) {
	return library.OpenConnectorDialer(dsn, dial)
}

// New returns a connector over valkey-go clients you built, one per
// independent master; pass it to lock.OpenConnector. Closing the lock
// client leaves them open.
func New(clients []valkey.Client, opts ...redlock.Option) (driver.Connector, error) {
	return library.New(clients, opts...)
}
