package conformance

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
)

// ShortLease returns a deliberately unsafe connector over c. Its
// connections ask the backend for a lease of a TTL divided by shrink,
// while the client believes the TTL it asked for, as a driver that got its
// units wrong would. It is for showing that a checker (RunProcesses, the
// suite) catches an unsafe driver under the same faults as the safe ones.
// A holder paused past the short lease overlaps the next.
func ShortLease(c driver.Connector, shrink int) driver.Connector {
	return wrapped{c, func(cn driver.Conn) driver.Conn { return shortConn{cn, time.Duration(max(shrink, 1))} }}
}

// wrapped is a connector whose connections wrap makes from c's.
type wrapped struct {
	c    driver.Connector
	wrap func(driver.Conn) driver.Conn
}

func (w wrapped) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := w.c.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return w.wrap(cn), nil
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

// Leaky returns a deliberately leaky connector over c. Its connections ask
// the backend for a lease of a TTL times grow and never release one (a
// release reports success and sends nothing), as a driver whose release
// went to the wrong key would. It is for showing that RunProcesses's
// Leftovers count catches locks left behind.
func Leaky(c driver.Connector, grow int) driver.Connector {
	return wrapped{c, func(cn driver.Conn) driver.Conn { return leakyConn{cn, time.Duration(max(grow, 1))} }}
}

type leakyConn struct {
	driver.Conn
	grow time.Duration
}

func (l leakyConn) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	return l.Conn.Acquire(ctx, key, value, ttl*l.grow)
}

func (leakyConn) Release(context.Context, string, string) error { return nil }

// RequireLeftoversSeen shows that leftovers counts what it should. It runs
// two worker processes briefly on connect's connector made Leaky (leases
// of ten TTLs, never released). It fails t unless leftovers still counts
// locks a TTL and a half after the run. A count that sees nothing checks
// nothing. Call it in a test of its own (or a subtest), since
// RunProcesses reruns the calling test in its workers.
func RequireLeftoversSeen(t *testing.T, connect func(t testing.TB) driver.Connector, leftovers func(t *testing.T) int) {
	t.Helper()
	rep := RunProcesses(t, Processes{
		Open:      func(t testing.TB) *lock.Client { return lock.OpenConnector(Leaky(connect(t), 10)) },
		Workers:   2,
		Duration:  2 * time.Second,
		TTL:       500 * time.Millisecond,
		Leftovers: leftovers,
	})
	t.Log(rep)
	if len(rep.WorkerErrors) > 0 {
		t.Errorf("workers failed:\n%s", strings.Join(rep.WorkerErrors, "\n"))
	}
	if rep.LeftAfterTTL == 0 {
		t.Errorf("locks leased for ten TTLs and never released: none counted a TTL after the run (%v)", rep)
	}
}
