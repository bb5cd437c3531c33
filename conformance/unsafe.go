package conformance

import (
	"context"
	"errors"
	"time"

	"github.com/distlock/lock/driver"
)

// ShortLease returns a deliberately unsafe connector over c: its
// connections ask the backend for a lease of a TTL divided by shrink, while
// the client believes the TTL it asked for, as a driver that got its
// units wrong would. It is for showing that a checker (RunProcesses, the
// suite) catches an unsafe driver under the same faults as the safe ones:
// a holder paused past the short lease overlaps the next.
func ShortLease(c driver.Connector, shrink int) driver.Connector {
	return shortConnector{c, time.Duration(max(shrink, 1))}
}

type shortConnector struct {
	driver.Connector
	shrink time.Duration
}

func (s shortConnector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := s.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return shortConn{cn, s.shrink}, nil
}

type shortConn struct {
	driver.Conn
	shrink time.Duration
}

func (s shortConn) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	return s.Conn.Acquire(ctx, key, value, max(ttl/s.shrink, 10*time.Millisecond))
}

func (s shortConn) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	e, ok := s.Conn.(driver.Extender)
	if !ok {
		return errors.ErrUnsupported
	}
	return e.Extend(ctx, key, value, max(ttl/s.shrink, 10*time.Millisecond))
}
