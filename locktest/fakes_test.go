package locktest_test

import (
	"context"
	"sync"
	"time"

	"github.com/distlock/lock/driver"
)

// connectorOf connects to c.
type connectorOf struct{ c driver.Conn }

func (c connectorOf) Connect(context.Context) (driver.Conn, error) { return c.c, nil }

// plainConn is a driver.Conn with no optional interface and no tokens:
// one holder per key, leases that never expire.
type plainConn struct {
	mu   sync.Mutex
	held map[string]string
	lost chan struct{} // handed out as Lease.Lost, if not nil
}

func (p *plainConn) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held == nil {
		p.held = make(map[string]string)
	}
	if _, ok := p.held[key]; ok {
		return driver.Lease{}, driver.ErrHeld
	}
	p.held[key] = value
	return driver.Lease{Lost: p.lost}, nil
}

func (p *plainConn) Release(ctx context.Context, key, value string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held[key] != value {
		return driver.ErrNotHeld
	}
	delete(p.held, key)
	return nil
}

func (p *plainConn) Close() error { return nil }

// The optional interfaces, one type each, to combine.
type (
	extender   struct{}
	waiter     struct{}
	transferer struct{}
	leaser     struct{}
)

func (extender) Extend(context.Context, string, string, time.Duration) error { return nil }
func (waiter) Watch(context.Context, string) (driver.Watch, error)           { return nil, nil }
func (transferer) Transfer(context.Context, string, string, string, time.Duration) (driver.Lease, error) {
	return driver.Lease{}, nil
}
func (leaser) ExtendLease(_ context.Context, _, _ string, l driver.Lease, _ time.Duration) (driver.Lease, error) {
	return l, nil
}
func (leaser) ReleaseLease(context.Context, string, string, driver.Lease) error { return nil }
