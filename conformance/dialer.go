package conformance

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
)

// The Dialer cases check driver.DialerDriver: every connection a client
// opens, to every server, goes through the caller's dial. Fault injection
// (distlock verify) relies on it to cut and slow a client's connections.

const (
	// cutFor bounds the attempt made while every connection is cut.
	cutFor = 2 * time.Second

	// recoverWithin is how long a client may take to come back once its
	// dials succeed again (a client library's reconnection backoff).
	recoverWithin = 10 * time.Second
)

// dialer dials with net.Dialer, counts its dials, and keeps the
// connections it returned, so that a case can cut them all. It is safe
// for concurrent use.
type dialer struct {
	mu     sync.Mutex
	dials  int
	conns  []net.Conn
	refuse bool // a cut: every dial is refused
}

// newDialer returns a dialer whose connections are closed when the test
// ends, after the clients registered later.
func newDialer(t *testing.T) *dialer {
	d := &dialer{}
	t.Cleanup(func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		for _, c := range d.conns {
			c.Close()
		}
	})
	return d
}

func (d *dialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	refuse := d.refuse
	d.mu.Unlock()
	if refuse {
		return nil, refusedDial(network, addr)
	}
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.refuse { // a cut began during the dial
		c.Close()
		return nil, refusedDial(network, addr)
	}
	d.dials++
	d.conns = append(d.conns, c)
	return c, nil
}

// count returns how many connections were dialed.
func (d *dialer) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dials
}

// cut closes every connection dialed so far, and refuses new dials until
// heal. It returns how many connections it closed.
func (d *dialer) cut() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.refuse = true
	n := len(d.conns)
	for _, c := range d.conns {
		c.Close()
	}
	d.conns = nil
	return n
}

// heal lets dials through again.
func (d *dialer) heal() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.refuse = false
}

// refusedDial is the error of a dial to a server that refuses it, as a cut
// link gives.
func refusedDial(network, addr string) error {
	return &net.OpError{Op: "dial", Net: network, Addr: fakeAddr{network, addr}, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

// fakeAddr is the address of a dial that never reached the network.
type fakeAddr struct{ network, addr string }

func (a fakeAddr) Network() string { return a.network }
func (a fakeAddr) String() string  { return a.addr }

// dialerClient returns a new client whose connections dial dials, closed
// when the test ends. If ready, it waits until the client has connected.
func (s *suite) dialerClient(t *testing.T, dial driver.DialFunc, ready bool) *lock.Client {
	t.Helper()
	c := s.h.NewDialerClient(t, dial)
	if c == nil {
		t.Fatal("conformance: Harness.NewDialerClient returned nil")
	}
	if ready {
		s.ready(t, c)
		return c
	}
	t.Cleanup(func() { c.Close() })
	c.SetLogger(slog.New(slog.NewTextHandler(t.Output(), nil)))
	return c
}

func (s *suite) dialerEveryConnection(t *testing.T) {
	if s.h.NewDialerClient == nil {
		t.Skip("Harness.NewDialerClient is not set: the driver takes no dialer")
	}
	ctx := s.ctxFor(t)
	d := newDialer(t)
	a, b := s.dialerClient(t, d.dial, true), s.dialerClient(t, d.dial, true)

	k := key(t, "")
	l := mustAcquire(t, ctx, a, k, lock.WithTTL(time.Minute))
	if s.h.Extend {
		if err := l.Extend(ctx, time.Minute); err != nil {
			t.Fatalf("Extend: %v", err)
		}
	}
	// b waits for the release, woken by the driver's announcement where it
	// makes one: that subscription's connection goes through dial too.
	poll := lock.FixedDelay(s.h.TTL / 10)
	if s.h.Wakeups {
		poll = lock.FixedDelay(time.Minute)
	}
	released := make(chan error, 1)
	go func() {
		time.Sleep(s.h.TTL / 2)
		released <- l.Release(ctx)
	}()
	l2, err := b.Acquire(ctx, k, lock.WithRetry(poll))
	if rerr := <-released; rerr != nil {
		t.Fatalf("Release: %v", rerr)
	}
	if err != nil {
		t.Fatalf("Acquire while the holder releases: %v", err)
	}
	if err := l2.Release(ctx); err != nil {
		t.Fatalf("Release after waiting: %v", err)
	}

	dialed := d.count()
	if dialed == 0 {
		t.Fatal("the clients worked without a single dial through the dialer: the driver dials its connections itself")
	}

	// Cut every connection the dialer returned, and refuse new ones: no
	// request may get through, or it went over a connection dialed
	// elsewhere.
	closed := d.cut()
	cctx, cancel := context.WithTimeout(ctx, cutFor)
	l, err = a.TryAcquire(cctx, key(t, "-cut"))
	cancel()
	if err == nil {
		l.Release(ctx)
		t.Fatalf("TryAcquire succeeded with the %d connections the dialer returned closed and every new dial refused: the driver reached the backend over a connection it dialed itself", closed)
	}

	// Dials succeed again: the client comes back through new ones.
	d.heal()
	start := time.Now()
	for {
		err := acquireRelease(ctx, a, k)
		if err == nil {
			break
		}
		if time.Since(start) > recoverWithin {
			t.Fatalf("%v after the cut ended, acquire and release still fail: %v", recoverWithin, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := d.count(); n <= dialed {
		t.Fatalf("the client came back after its connections were cut without a new dial through the dialer (%d dials before, %d after)", dialed, n)
	}
}

// acquireRelease takes key through c and gives it back.
func acquireRelease(ctx context.Context, c *lock.Client, key string) error {
	l, err := c.TryAcquire(ctx, key)
	if err != nil {
		return err
	}
	return l.Release(ctx)
}

func (s *suite) dialerFailing(t *testing.T) {
	if s.h.NewDialerClient == nil {
		t.Skip("Harness.NewDialerClient is not set: the driver takes no dialer")
	}
	refuse := func(ctx context.Context, network, addr string) (net.Conn, error) {
		return nil, refusedDial(network, addr)
	}
	c := s.dialerClient(t, refuse, false)
	k := key(t, "")
	const deadline = 2 * time.Second
	margin := max(2*time.Second, s.h.TTL)
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	start := time.Now()
	l, err := c.Acquire(ctx, k)
	took := time.Since(start)
	if err == nil {
		l.Release(context.Background())
		t.Fatal("Acquire succeeded with a dialer that refuses every connection")
	}
	if !errors.Is(err, lock.ErrUnavailable) && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Acquire with every dial refused = %v, want an error matching ErrUnavailable or context.DeadlineExceeded", err)
	}
	if errors.Is(err, lock.ErrNotAcquired) {
		t.Errorf("Acquire with every dial refused = %v: it matches ErrNotAcquired, as if the key were held", err)
	}
	if took > deadline+margin {
		t.Errorf("Acquire with every dial refused took %v, past its %v deadline by more than %v", took, deadline, margin)
	}
	assertFree(t, s.ctxFor(t), s.client(t), k, "an acquisition whose every dial was refused holds nothing")
}
