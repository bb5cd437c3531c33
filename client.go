package lock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distlock/lock/driver"
)

// Locker is the interface of [*Client], for code that wants to accept any
// lock client, including test doubles.
type Locker interface {
	Acquire(ctx context.Context, key string, opts ...Option) (*Lock, error)
	TryAcquire(ctx context.Context, key string, opts ...Option) (*Lock, error)
	Do(ctx context.Context, key string, fn func(context.Context) error, opts ...Option) error
}

var _ Locker = (*Client)(nil)

// Client is a handle to one lock backend. It is safe for concurrent use by
// any number of goroutines, and is meant to be opened once and shared.
type Client struct {
	connector driver.Connector

	mu      sync.Mutex // serialises connecting and closing
	conn    atomic.Pointer[conn]
	closed  atomic.Bool   // set under heldMu
	closing chan struct{} // closed by Close, to end waiting calls
	ops     atomic.Int64  // operations in flight (see enter)
	idle    chan struct{} // closed once the client is closed and no operation is in flight
	idleOne sync.Once

	heldMu sync.Mutex
	held   *Lock // the first of the locks the client holds, linked by Lock.next

	defaults []Option // given at Open; checked there
	logger   atomic.Pointer[slog.Logger]
	warns    warnLimiter // rate limits the warnings (log.go)
	observer atomic.Pointer[Observer]
	stats    counters
	waits    queues // of the calls waiting for keys, by key
}

// conn is a connected driver.Conn with its optional interfaces resolved, so
// that the type assertions happen once, here.
type conn struct {
	driver.Conn
	extender        driver.Extender        // nil if unsupported
	leaser          driver.LeaseConn       // nil if unsupported
	waiter          driver.Waiter          // nil if unsupported
	transferer      driver.Transferer      // nil if unsupported
	leaseTransferer driver.LeaseTransferer // nil unless a LeaseConn and a Transferer
	pinger          driver.Pinger          // nil if unsupported
	inspector       driver.Inspector       // nil if unsupported
}

func newConn(dc driver.Conn) *conn {
	c := &conn{Conn: dc}
	c.extender, _ = dc.(driver.Extender)
	c.leaser, _ = dc.(driver.LeaseConn)
	c.waiter, _ = dc.(driver.Waiter)
	c.transferer, _ = dc.(driver.Transferer)
	if c.leaser != nil && c.transferer != nil {
		c.leaseTransferer, _ = dc.(driver.LeaseTransferer)
	}
	c.pinger, _ = dc.(driver.Pinger)
	c.inspector, _ = dc.(driver.Inspector)
	return c
}

// connect returns the client's connection, connecting on first use.
func (c *Client) connect(ctx context.Context) (*conn, error) {
	if cn := c.conn.Load(); cn != nil && !c.closed.Load() {
		return cn, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		return nil, ErrClosed
	}
	if cn := c.conn.Load(); cn != nil {
		return cn, nil
	}
	dc, err := c.connector.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", classify(ctx, err))
	}
	if dc == nil {
		return nil, errors.New("connect: driver returned a nil connection")
	}
	cn := newConn(dc)
	c.conn.Store(cn)
	return cn, nil
}

// Ping connects to the backend if the client has not yet, and checks that
// it answers where the driver can tell.
func (c *Client) Ping(ctx context.Context) error {
	cn, err := c.connect(ctx)
	if err != nil {
		return opError("ping", "", err)
	}
	if !c.enter() {
		return opError("ping", "", ErrClosed)
	}
	defer c.leave()
	if cn.pinger != nil {
		if err := cn.pinger.Ping(ctx); err != nil {
			return opError("ping", "", err)
		}
	}
	return nil
}

// Close lets go of the backend. It stops new acquisitions, and waiting
// Acquire calls return an error matching [ErrClosed]. Close waits up to 5s
// for the operations in flight to end. After that it closes the connection
// under the ones still running, and they fail. Close then releases the
// locks the client still holds, each under a timeout of 2s. Before each
// release, the lock's [Lock.Done] is closed with [Lock.Err] matching
// ErrClosed, so that the functions of running [Client.Do] calls are
// cancelled with that cause. Last, Close closes the connection.
//
// A key that Close released is free to others at once. A lock it could not
// release expires by its TTL. Every later operation of the client and of
// its locks fails with ErrClosed. The one exception is the Release of a
// lock that Close released, which returns nil. Closing a closed client
// does nothing and returns nil.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	locks, ok := c.closeHeld()
	if !ok {
		return nil
	}
	close(c.closing)
	c.drain()
	c.releaseAll(locks)
	var errs []error
	if cn := c.conn.Load(); cn != nil {
		errs = append(errs, cn.Close())
	}
	if cl, ok := c.connector.(io.Closer); ok {
		errs = append(errs, cl.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return opError("close", "", err)
	}
	return nil
}

// closeWait bounds how long Close waits for the operations in flight.
const closeWait = 5 * time.Second

// drain waits up to closeWait for the operations in flight to end. A
// backend that stopped answering must not hold Close up. Operations
// admitted after drain see the client closed.
func (c *Client) drain() {
	if c.ops.Load() == 0 {
		c.idleOne.Do(func() { close(c.idle) })
	}
	t := time.NewTimer(closeWait)
	defer t.Stop()
	select {
	case <-c.idle:
	case <-t.C:
		c.warn(context.Background(), "lock: Close: operations still in flight; closing the connection under them", "waited", closeWait)
	}
}

// releaseAll releases locks, at once, each under its own timeout.
func (c *Client) releaseAll(locks []*Lock) {
	var wg sync.WaitGroup
	for _, l := range locks {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
			defer cancel()
			l.releaseOnClose(ctx)
		})
	}
	wg.Wait()
}

// Stats returns the client's counters since it was opened.
func (c *Client) Stats() Stats { return c.stats.snapshot() }

// Acquire acquires the lock on key, waiting while someone else holds it.
// It makes attempts as the retry strategy says ([WithRetry], by default
// [DefaultRetry]) until it holds the lock, the strategy gives up, or ctx is
// done. On drivers that announce releases, it wakes as soon as the key is
// released. An attempt that fails because the backend is unavailable is
// retried the same way, with one exception. If that attempt was made at a
// release's announcement, or if subscribing to releases failed, the next
// attempt comes after 10ms, doubling with each further failure, whenever
// the strategy would wait longer. Nothing would announce that release
// again, and an unsubscribed waiter hears of none.
//
// Calls of one client waiting for the same key queue in arrival order.
// Only the first in line tries the backend and listens for releases. A
// call that finds others of its client waiting joins the back of the line
// without trying first. A release by this client wakes the first in line
// at once. On drivers that can transfer a lease (driver.Transferer), the
// release hands the lock straight over to it, as long as the run of such
// handovers on the key has lasted less than 20ms. TryAcquire does not
// queue.
//
// When Acquire gives up, the error matches the last attempt's cause. That
// is [ErrNotAcquired] if the key was held, or else the backend's error. If
// ctx ended the wait, the error matches ctx's error as well. A failed or
// cancelled acquisition leaves nothing held. Acquire gives up at once on
// an error matching [ErrMisconfigured]. It also gives up after
// [MaxUnavailable] of attempts that all failed with [ErrUnavailable]. It
// never returns a lock whose validity has passed. Such a grant is given
// back in the background, and the wait goes on.
func (c *Client) Acquire(ctx context.Context, key string, opts ...Option) (*Lock, error) {
	o, err := apply(key, c.defaults, opts)
	if err != nil {
		return nil, opError("acquire", key, err)
	}
	return c.acquireTraced(ctx, key, &o)
}

// TryAcquire makes exactly one attempt to acquire the lock on key. If
// someone else holds it, the error matches [ErrNotAcquired]. Any other
// error means the attempt could not be made or completed, and leaves
// nothing held. The attempt is bounded by ctx and by the driver's own
// request timeout. A failed attempt waits, while ctx allows, for the
// release that cleans up after it (under its own timeout of 2s). That
// release goes on in the background once ctx is done. A lock whose
// validity passed before TryAcquire could return it is given back, and the
// attempt fails.
func (c *Client) TryAcquire(ctx context.Context, key string, opts ...Option) (*Lock, error) {
	o, err := apply(key, c.defaults, opts)
	if err != nil {
		return nil, opError("acquire", key, err)
	}
	ctx, t := c.trace(ctx, "acquire", key)
	cn, err := c.ready(ctx)
	if err != nil {
		err = opError("acquire", key, err)
		t.end(ctx, acquired(nil, 0, err))
		return nil, err
	}
	l, err := c.attempt(ctx, cn, key, &o, nil)
	t.end(ctx, acquired(l, 1, err))
	if err == nil {
		if err = c.handOut(l); err != nil {
			l = nil
		}
	}
	return l, err
}

// acquireTraced is acquire, followed by the client's observer and debug
// log.
func (c *Client) acquireTraced(ctx context.Context, key string, o *options) (*Lock, error) {
	for {
		ctx, t := c.trace(ctx, "acquire", key)
		l, attempts, err := c.acquire(ctx, key, o)
		t.end(ctx, acquired(l, attempts, err))
		if err != nil || c.handOut(l) == nil {
			return l, err
		}
		// Its validity passed while the call ended, so wait on.
	}
}

// acquired is the event of an acquisition that ended with l and err.
func acquired(l *Lock, attempts int, err error) Event {
	ev := Event{Err: err, Attempts: attempts}
	if l != nil {
		ev.Token, ev.Fenced = l.Token()
	}
	return ev
}

// acquire acquires key with checked options, waiting while it is held.
// It makes attempts until one takes the key. Before each attempt, the
// call's wait (see wait) waits until the attempt is due, or says that the
// call gives up. acquire also returns the number of attempts made.
func (c *Client) acquire(ctx context.Context, key string, o *options) (l *Lock, attempts int, err error) {
	cn, err := c.ready(ctx)
	if err != nil {
		return nil, 0, opError("acquire", key, err)
	}
	w := c.waits.newWait(key, o, cn.waiter, cn.transferer != nil, c.closing, c.log())
	var failure error // the last attempt's; nil before the first
	for {
		if l, err = w.next(ctx, failure); err != nil {
			w.end(nil)
			return nil, attempts, err
		}
		if l == nil {
			attempts++
			if l, failure = c.attempt(ctx, cn, key, o, w.turn()); l == nil {
				continue
			}
		}
		if failure = c.handOut(l); failure == nil {
			w.end(l)
			return l, attempts, nil
		}
	}
}

// ready returns the client's connection for an operation under ctx, or
// why the operation cannot be made.
func (c *Client) ready(ctx context.Context) (*conn, error) {
	if c.closed.Load() {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.connect(ctx)
}

// String describes the client by its connector, without secrets. It uses
// the connector's own String if it has one (the drivers' connectors redact
// passwords), and the connector's type otherwise.
func (c *Client) String() string {
	desc := fmt.Sprintf("%T", c.connector)
	if s, ok := c.connector.(fmt.Stringer); ok {
		desc = s.String()
	}
	if c.closed.Load() {
		desc += ", closed"
	}
	return "lock.Client(" + desc + ")"
}

// GoString is String, so that %#v does not print the connector's fields.
func (c *Client) GoString() string { return c.String() }
