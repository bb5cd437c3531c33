package benchmark

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
)

// outageDriverName is a driver whose backend, a map in memory, is down
// while outageDown is set: every call fails as unavailable.
const outageDriverName = "benchmark-test-outage"

var outageDown atomic.Bool

func init() { lock.Register(outageDriverName, outageDriver{}) }

type outageDriver struct{}

func (outageDriver) OpenConnector(string) (driver.Connector, error) { return outageDriver{}, nil }
func (outageDriver) Connect(context.Context) (driver.Conn, error) {
	return &outageConn{held: make(map[string]string)}, nil
}

var _ driver.Conn = (*outageConn)(nil)

type outageConn struct {
	mu   sync.Mutex
	held map[string]string // key -> value
}

func down() error {
	if outageDown.Load() {
		return fmt.Errorf("%w: connection refused", driver.ErrUnavailable)
	}
	return nil
}

// Acquire takes 1ms, a round trip: the load's rate is then steady on a
// loaded machine, where a rate bound by the CPU was not.
func (c *outageConn) Acquire(_ context.Context, key, value string, _ time.Duration) (driver.Lease, error) {
	time.Sleep(time.Millisecond)
	if err := down(); err != nil {
		return driver.Lease{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.held[key]; ok {
		return driver.Lease{}, driver.ErrHeld
	}
	c.held[key] = value
	return driver.Lease{}, nil
}

func (c *outageConn) Release(_ context.Context, key, value string) error {
	if err := down(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held[key] != value {
		return driver.ErrNotHeld
	}
	delete(c.held, key)
	return nil
}

func (c *outageConn) Close() error { return nil }

// outage is a faultInjector that takes the outage driver's backend down
// for a while, as a server restarted would be.
type outage struct{ d time.Duration }

func (o outage) inject(context.Context) (string, *backTime, error) {
	outageDown.Store(true)
	back := newBackTime()
	time.AfterFunc(o.d, func() {
		outageDown.Store(false)
		back.at.Store(int64(time.Since(back.start)))
		close(back.fin)
	})
	return fmt.Sprintf("down for %v", o.d), back, nil
}

func (o outage) summarize() string { return "down" }
