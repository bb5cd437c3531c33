package benchmark

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
)

// brokenDriverName is a driver whose backend works only for the keys of
// the uncontended measurement: the others fail, as a backend that went
// down after the first measurement would.
const brokenDriverName = "benchmark-test-broken"

func init() { lock.Register(brokenDriverName, brokenDriver{}) }

var errBackendDown = errors.New("backend down")

type brokenDriver struct{}

func (brokenDriver) OpenConnector(string) (driver.Connector, error) { return brokenDriver{}, nil }
func (brokenDriver) Connect(context.Context) (driver.Conn, error) {
	return &brokenConn{held: make(map[string]string)}, nil
}

var _ driver.Conn = (*brokenConn)(nil)

type brokenConn struct {
	mu   sync.Mutex
	held map[string]string // key -> value
}

func works(key string) bool { return strings.Contains(key, "/uncontended/") }

func (c *brokenConn) Acquire(_ context.Context, key, value string, _ time.Duration) (driver.Lease, error) {
	if !works(key) {
		return driver.Lease{}, errBackendDown
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.held[key]; ok {
		return driver.Lease{}, driver.ErrHeld
	}
	c.held[key] = value
	return driver.Lease{}, nil
}

func (c *brokenConn) Release(_ context.Context, key, value string) error {
	if !works(key) {
		return errBackendDown
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held[key] != value {
		return driver.ErrNotHeld
	}
	delete(c.held, key)
	return nil
}

func (c *brokenConn) Close() error { return nil }
