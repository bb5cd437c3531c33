package lock

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/distlock/lock/driver"
)

var (
	driversMu sync.RWMutex
	drivers   = make(map[string]driver.Driver)
)

// Register makes a driver available under name to [Open]. Drivers call it
// from an init function. It panics if d is nil or if name is already
// registered, since either is a programming error.
func Register(name string, d driver.Driver) {
	driversMu.Lock()
	defer driversMu.Unlock()
	if d == nil {
		panic("lock: Register driver is nil")
	}
	if _, dup := drivers[name]; dup {
		panic("lock: Register called twice for driver " + name)
	}
	drivers[name] = d
}

// Drivers returns the sorted names of the registered drivers.
func Drivers() []string {
	driversMu.RLock()
	defer driversMu.RUnlock()
	names := make([]string, 0, len(drivers))
	for name := range drivers {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Open returns a [Client] for the backend that the driver registered as
// driverName finds at dsn. opts are the defaults of the client's calls,
// such as a TTL or a retry strategy, and each call's own options override
// them. The driver parses the DSN here, so a malformed one is reported at
// once, as are bad options. Open never contacts the backend (use
// [Client.Ping] for that). Errors never repeat the DSN, which may hold a
// password.
func Open(driverName, dsn string, opts ...Option) (*Client, error) {
	return open(driverName, dsn, nil, opts)
}

// OpenDialer is [Open], with every connection to the backend's servers
// dialed by dial. A test or a tool can then slow, stall or cut them. The
// error matches [errors.ErrUnsupported] if the driver cannot take a
// dialer (see [driver.DialerDriver]).
func OpenDialer(driverName, dsn string, dial driver.DialFunc, opts ...Option) (*Client, error) {
	if dial == nil {
		return nil, opError("open", "", errors.New("nil dial function"))
	}
	return open(driverName, dsn, dial, opts)
}

func open(driverName, dsn string, dial driver.DialFunc, opts []Option) (*Client, error) {
	if err := checkDefaults(opts); err != nil {
		return nil, opError("open", "", err)
	}
	c, err := connector(driverName, dsn, dial)
	if err != nil {
		return nil, err
	}
	return OpenConnector(c, opts...), nil
}

// NewConnector returns the connector that the driver registered as
// driverName makes of dsn, which [Open] gives its [Client]. A tool that
// needs a connection of its own, to reach an optional interface such as
// [driver.Dropper], opens one with it. NewConnector never contacts the
// backend, and its errors never repeat the DSN.
func NewConnector(driverName, dsn string) (driver.Connector, error) {
	return connector(driverName, dsn, nil)
}

// NewConnectorDialer is [NewConnector], with every connection to the
// backend's servers dialed by dial, as [OpenDialer] has it. The error
// matches [errors.ErrUnsupported] if the driver cannot take a dialer.
func NewConnectorDialer(driverName, dsn string, dial driver.DialFunc) (driver.Connector, error) {
	if dial == nil {
		return nil, opError("open", "", errors.New("nil dial function"))
	}
	return connector(driverName, dsn, dial)
}

// connector returns driverName's connector for dsn, whose connections
// dial is given to if not nil.
func connector(driverName, dsn string, dial driver.DialFunc) (driver.Connector, error) {
	driversMu.RLock()
	d, ok := drivers[driverName]
	driversMu.RUnlock()
	if !ok {
		return nil, opError("open", "", fmt.Errorf("unknown driver %q (forgotten import?)", driverName))
	}
	var c driver.Connector
	var err error
	if dial == nil {
		c, err = d.OpenConnector(dsn)
	} else if dd, ok := d.(driver.DialerDriver); ok {
		c, err = dd.OpenConnectorDialer(dsn, dial)
	} else {
		err = fmt.Errorf("cannot take a dialer: %w", errors.ErrUnsupported)
	}
	if err != nil {
		return nil, opError("open", "", fmt.Errorf("driver %q: %w", driverName, err))
	}
	return c, nil
}

// OpenConnector returns a [Client] that uses c, with opts as the defaults
// of its calls. It does not contact the backend. The first operation that
// needs the backend connects. OpenConnector cannot fail. Instead, bad
// options make each acquisition fail with an error matching
// [ErrInvalidOption] or [ErrInvalidTTL].
func OpenConnector(c driver.Connector, opts ...Option) *Client {
	return &Client{connector: c, closing: make(chan struct{}), idle: make(chan struct{}), defaults: slices.Clone(opts)}
}
