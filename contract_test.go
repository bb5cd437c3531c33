package lock_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
)

// revisionConn is a driver.LeaseConn that keeps a revision per grant, as a
// key-value store with compare-and-swap would: each extension must hand
// back the revision the last one returned.
type revisionConn struct {
	mu       sync.Mutex
	rev      int
	released []int // the revisions handed to ReleaseLease
	stale    int   // extensions or releases handed a revision other than the last
	lost     chan struct{}
}

func (c *revisionConn) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rev++
	return driver.Lease{State: c.rev, Lost: c.lost}, nil
}

func (c *revisionConn) Release(ctx context.Context, key, value string) error {
	return errors.New("Release by value only: the core should hand the lease back")
}

func (c *revisionConn) ExtendLease(ctx context.Context, key, value string, l driver.Lease, ttl time.Duration) (driver.Lease, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if l.State != c.rev {
		c.stale++
		return driver.Lease{}, driver.ErrNotHeld
	}
	c.rev++
	l.State = c.rev
	return l, nil
}

func (c *revisionConn) ReleaseLease(ctx context.Context, key, value string, l driver.Lease) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if l.State != c.rev {
		c.stale++
		return driver.ErrNotHeld
	}
	c.released = append(c.released, l.State.(int))
	return nil
}

func (c *revisionConn) Close() error { return nil }

type connectorOf struct{ c driver.Conn }

func (c connectorOf) Connect(context.Context) (driver.Conn, error) { return c.c, nil }

// TestLeaseConn_handsBackTheLatestState: Extend and Release hand the
// driver the state that its last answer returned.
func TestLeaseConn_handsBackTheLatestState(t *testing.T) {
	rc := &revisionConn{}
	c := lock.OpenConnector(connectorOf{rc})
	defer c.Close()
	ctx := context.Background()
	l, err := c.TryAcquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := l.Extend(ctx, time.Second); err != nil {
			t.Fatalf("Extend: %v", err)
		}
	}
	if err := l.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.stale != 0 || len(rc.released) != 1 || rc.released[0] != 4 {
		t.Errorf("stale state handed back %d times, released revisions %v; want 0 and [4]", rc.stale, rc.released)
	}
}

// TestLeaseLost_endsTheLockAtOnce: a driver that closes Lease.Lost ends
// the lock as known lost, long before its validity runs out, and Do's
// function is cancelled.
func TestLeaseLost_endsTheLockAtOnce(t *testing.T) {
	rc := &revisionConn{lost: make(chan struct{})}
	c := lock.OpenConnector(connectorOf{rc})
	defer c.Close()
	ctx := context.Background()
	cancelled := make(chan time.Time, 1)
	var lostAt time.Time
	err := c.Do(ctx, "k", func(ctx context.Context) error {
		lostAt = time.Now()
		close(rc.lost)
		<-ctx.Done()
		cancelled <- time.Now()
		return context.Cause(ctx)
	}, lock.WithTTL(time.Minute))
	if !errors.Is(err, lock.ErrLost) {
		t.Errorf("Do = %v, want an error matching ErrLost", err)
	}
	if lag := (<-cancelled).Sub(lostAt); lag > time.Second {
		t.Errorf("fn cancelled %v after the driver reported the loss", lag)
	}
	if s := c.Stats(); s.Lost != 1 {
		t.Errorf("Stats().Lost = %d, want 1", s.Lost)
	}
}

// TestLeaseLost_lockErr: the lock's Err says it is known lost, and
// Release reports ErrNotHeld without asking the backend.
func TestLeaseLost_lockErr(t *testing.T) {
	rc := &revisionConn{lost: make(chan struct{})}
	c := lock.OpenConnector(connectorOf{rc})
	defer c.Close()
	ctx := context.Background()
	l, err := c.TryAcquire(ctx, "k", lock.WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	close(rc.lost)
	select {
	case <-l.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed after the driver reported the loss")
	}
	if err := l.Err(); !errors.Is(err, lock.ErrLost) || !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Err = %v, want an error matching ErrLost and ErrNotHeld", err)
	}
	if err := l.Release(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Release = %v, want ErrNotHeld", err)
	}
}

// dialingDriver takes a dialer, and records that it did.
type dialingDriver struct{ dialed *driver.DialFunc }

func (d dialingDriver) OpenConnector(dsn string) (driver.Connector, error) {
	return connectorOf{&revisionConn{}}, nil
}

func (d dialingDriver) OpenConnectorDialer(dsn string, dial driver.DialFunc) (driver.Connector, error) {
	*d.dialed = dial
	return d.OpenConnector(dsn)
}

type plainDriver struct{}

func (plainDriver) OpenConnector(dsn string) (driver.Connector, error) {
	return connectorOf{&revisionConn{}}, nil
}

var (
	registerDialing sync.Once
	dialedWith      driver.DialFunc
)

// TestOpenDialer: the dialer reaches a driver that takes one; a driver
// that does not is an ErrUnsupported error, and so is a nil dialer.
func TestOpenDialer(t *testing.T) {
	registerDialing.Do(func() {
		lock.Register("test-dialing", dialingDriver{&dialedWith})
		lock.Register("test-plain", plainDriver{})
	})
	dialedWith = nil
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) { return nil, errors.New("no") }
	c, err := lock.OpenDialer("test-dialing", "x", dial)
	if err != nil || dialedWith == nil {
		t.Fatalf("OpenDialer on a driver that takes a dialer = %v; dialer handed over: %v", err, dialedWith != nil)
	}
	c.Close()
	if _, err := lock.OpenDialer("test-plain", "x", dial); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("OpenDialer on a driver without DialerDriver = %v, want ErrUnsupported", err)
	}
	if _, err := lock.OpenDialer("test-dialing", "x", nil); err == nil {
		t.Error("OpenDialer with a nil dialer succeeded")
	}
	dialedWith = nil
	if _, err := lock.NewConnectorDialer("test-dialing", "x", dial); err != nil || dialedWith == nil {
		t.Errorf("NewConnectorDialer on a driver that takes a dialer = %v; dialer handed over: %v", err, dialedWith != nil)
	}
	if _, err := lock.NewConnectorDialer("test-plain", "x", dial); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("NewConnectorDialer on a driver without DialerDriver = %v, want ErrUnsupported", err)
	}
	if _, err := lock.NewConnectorDialer("test-dialing", "x", nil); err == nil {
		t.Error("NewConnectorDialer with a nil dialer succeeded")
	}
}
