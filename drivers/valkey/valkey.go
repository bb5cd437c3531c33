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

// OpenConnector parses dsn; it does not contact the nodes.
func (Driver) OpenConnector(dsn string) (driver.Connector, error) { return library.OpenConnector(dsn) }

// New returns a connector over valkey-go clients you built, one per
// independent master; pass it to lock.OpenConnector. Closing the lock
// client leaves them open.
func New(clients []valkey.Client, opts ...redlock.Option) (driver.Connector, error) {
	return library.New(clients, opts...)
}
