package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// errClosed is returned by a connection's methods after Close.
var errClosed = errors.New("postgres: connection closed")

// conn is one client's connection: a pool for the lock statements and,
// once the client first waits, a listener on a dedicated connection.
type conn struct {
	pool    *pgxpool.Pool
	owned   bool // the pool is ours to close
	t       *table
	ln      *listener
	timeout time.Duration // the request timeout

	slots *slots      // an own pool's connections, for the fast path (see call); nil for a pool from New
	live  *live       // an own pool's connections, for Close to cut short; nil for a pool from New
	cut   atomic.Bool // Close has cut the connections short

	callsMu sync.Mutex
	calls   map[context.Context]context.CancelFunc // the calls in flight, for Close to end
	closed  bool                                   // Close has ended the calls in flight

	mu      sync.Mutex
	watched map[string]time.Time // keys this connection marked as waited for, and when

	heldMu sync.Mutex
	held   map[string]struct{} // keys whose last attempt here was refused

	unsent unsent // values whose acquisition never reached the server

	closeOnce sync.Once
}

var (
	_ driver.Conn       = (*conn)(nil)
	_ driver.Extender   = (*conn)(nil)
	_ driver.Transferer = (*conn)(nil)
	_ driver.Waiter     = (*conn)(nil)
	_ driver.Pinger     = (*conn)(nil)
	_ driver.Inspector  = (*conn)(nil)
	_ driver.Dropper    = (*conn)(nil)
)

// newConn returns a connection on pool. For a pool of the driver's own,
// l holds the pool's connections (see ownPool); for a pool from New, it is
// nil.
func newConn(pool *pgxpool.Pool, owned bool, l *live, t *table, timeout time.Duration) *conn {
	c := &conn{
		pool:    pool,
		owned:   owned,
		t:       t,
		timeout: timeout,
		live:    l,
		calls:   make(map[context.Context]context.CancelFunc),
		watched: make(map[string]time.Time),
		held:    make(map[string]struct{}),
	}
	if l != nil {
		c.slots = newSlots(pool.Config().MaxConns)
	}
	c.ln = newListener(t.name, c.listenConn)
	return c
}

// interval is ttl as an interval, rounded up to the microsecond (the
// server's resolution), so that the server's lease is never shorter than
// asked.
func interval(ttl time.Duration) pgtype.Interval {
	us := (ttl + time.Microsecond - 1) / time.Microsecond
	return pgtype.Interval{Microseconds: int64(us), Valid: true}
}

// request returns the context of one call under ctx: it ends with ctx, at
// the request timeout (with errTimedOut as its cause), or when the
// connection closes. The call must call done when it returns.
func (c *conn) request(ctx context.Context) (_ context.Context, done func()) {
	ctx, cancel := context.WithTimeoutCause(ctx, c.timeout, errTimedOut)
	c.callsMu.Lock()
	defer c.callsMu.Unlock()
	if c.closed {
		cancel()
		return ctx, cancel
	}
	c.calls[ctx] = cancel
	return ctx, func() {
		c.callsMu.Lock()
		delete(c.calls, ctx)
		c.callsMu.Unlock()
		cancel()
	}
}

// failSlow marks err, the failure of a call under ctx, as errClosed if
// Close ended the call, and as [failure] does otherwise.
func (c *conn) failSlow(ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), context.Canceled) {
		c.callsMu.Lock()
		closed := c.closed
		c.callsMu.Unlock()
		if closed {
			return fmt.Errorf("%w: %w", errClosed, err)
		}
	}
	return failure(ctx, err, c.timeout)
}

// heldKeys bounds how many keys a connection remembers having found held;
// forgetting one only costs its next refusal a row lock.
const heldKeys = 4096

// Acquire makes one attempt to acquire key, in one statement: the plain
// one, or, if the key's last attempt here found it held, the guarded one,
// which turns a refusal away without writing (see newTable).
func (c *conn) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	c.heldMu.Lock()
	_, wasHeld := c.held[key]
	c.heldMu.Unlock()
	q := c.t.acquire
	if wasHeld {
		q = c.t.acquireGuarded
	}
	cl, err := c.begin(ctx)
	defer c.end(&cl)
	if err != nil {
		c.unsent.add(value)
		return driver.Lease{}, c.fail(&cl, err)
	}
	var fence int64
	err = cl.pc.QueryRow(cl.ctx, q, key, value, interval(ttl)).Scan(&fence)
	if err != nil && pgconn.SafeToRetry(err) {
		c.unsent.add(value)
	}
	lease, err := c.leaseOf(&cl, fence, err, driver.ErrHeld)
	switch {
	case err == nil && wasHeld:
		c.heldMu.Lock()
		delete(c.held, key)
		c.heldMu.Unlock()
	case errors.Is(err, driver.ErrHeld) && !wasHeld:
		c.heldMu.Lock()
		if len(c.held) >= heldKeys {
			clear(c.held)
		}
		c.held[key] = struct{}{}
		c.heldMu.Unlock()
	}
	return lease, err
}

// leaseOf is the outcome of a statement of the call cl that returns the
// fence of a lease it granted, given the error of scanning it: the lease,
// or none if no row came back, or the backend's error.
func (c *conn) leaseOf(cl *call, fence int64, err, none error) (driver.Lease, error) {
	switch {
	case err == nil:
		return driver.Lease{Token: uint64(fence), Fenced: true}, nil
	case errors.Is(err, pgx.ErrNoRows):
		return driver.Lease{}, none
	}
	return driver.Lease{}, c.fail(cl, err)
}

// exec runs one statement that returns no rows, in a call of its own.
func (c *conn) exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	cl, err := c.begin(ctx)
	defer c.end(&cl)
	if err != nil {
		return pgconn.CommandTag{}, c.fail(&cl, err)
	}
	tag, err := cl.pc.Exec(cl.ctx, sql, args...)
	if err != nil {
		return tag, c.fail(&cl, err)
	}
	return tag, nil
}

func (c *conn) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	tag, err := c.exec(ctx, c.t.extend, key, value, interval(ttl))
	switch {
	case err != nil:
		return err
	case tag.RowsAffected() == 0:
		return driver.ErrNotHeld
	}
	return nil
}

// Transfer gives key, held by value, to next, in one statement.
func (c *conn) Transfer(ctx context.Context, key, value, next string, ttl time.Duration) (driver.Lease, error) {
	cl, err := c.begin(ctx)
	defer c.end(&cl)
	if err != nil {
		return driver.Lease{}, c.fail(&cl, err)
	}
	var fence int64
	err = cl.pc.QueryRow(cl.ctx, c.t.transfer, key, value, next, interval(ttl)).Scan(&fence)
	return c.leaseOf(&cl, fence, err, driver.ErrNotHeld)
}

// Release releases key if value holds it, in one statement, unless
// value's acquisition never reached the server.
func (c *conn) Release(ctx context.Context, key, value string) error {
	if c.unsent.take(value) {
		return driver.ErrNotHeld
	}
	tag, err := c.exec(ctx, c.t.release, key, value)
	switch {
	case err != nil:
		return err
	case tag.RowsAffected() == 0:
		return driver.ErrNotHeld
	}
	return nil
}

func (c *conn) Inspect(ctx context.Context, key string) (driver.Holder, bool, error) {
	var (
		h      driver.Holder
		fence  int64
		micros int64
	)
	cl, err := c.begin(ctx)
	defer c.end(&cl)
	if err != nil {
		return driver.Holder{}, false, c.fail(&cl, err)
	}
	err = cl.pc.QueryRow(cl.ctx, c.t.inspect, key).Scan(&h.Value, &fence, &micros)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return driver.Holder{}, false, nil
	case err != nil:
		return driver.Holder{}, false, c.fail(&cl, err)
	}
	h.TTL = time.Duration(max(micros, 0)) * time.Microsecond
	h.Lease = driver.Lease{Token: uint64(fence), Fenced: true}
	return h, true, nil
}

// Drop drops the lease table, with every lease in it, and refuses with
// [ErrNotScratch] for the default table or one the driver may not create.
// A dropped table is gone for this connection; a connection opened later
// makes it again, with every key's tokens starting again from 1.
func (c *conn) Drop(ctx context.Context) error {
	if c.t.scratch != nil {
		return fmt.Errorf("postgres: drop: %w", c.t.scratch)
	}
	cl, err := c.begin(ctx)
	defer c.end(&cl)
	if err == nil {
		_, err = cl.pc.Exec(cl.ctx, c.t.drop)
	}
	if err != nil {
		return c.fail(&cl, err)
	}
	return nil
}

func (c *conn) Ping(ctx context.Context) error {
	cl, err := c.begin(ctx)
	defer c.end(&cl)
	if err == nil {
		err = cl.pc.Ping(cl.ctx)
	}
	if err != nil {
		return c.fail(&cl, err)
	}
	return nil
}

// How long a connection remembers that it marked a key as waited for, and
// for how many keys at most.
const (
	watchedMemory = time.Minute
	watchedKeys   = 4096
)

// Watch subscribes to releases of key (see [listener.watch]), and makes
// sure that the key's row says that someone waits for it, so that its
// releases are announced. If it cannot, it fails: the caller then polls.
func (c *conn) Watch(ctx context.Context, key string) (driver.Watch, error) {
	ctx, done := c.request(ctx)
	defer done()
	w, err := c.ln.watch(ctx, key)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	c.mu.Lock()
	at, ok := c.watched[key]
	c.mu.Unlock()
	if ok && now.Sub(at) < watchedMemory {
		return w, nil
	}
	if _, err := c.exec(ctx, c.t.watch, key); err != nil {
		w.Close()
		return nil, err
	}
	c.mu.Lock()
	if len(c.watched) >= watchedKeys {
		clear(c.watched)
	}
	c.watched[key] = now
	c.mu.Unlock()
	return w, nil
}

// listenConn takes a connection out of the pool for good (so that it is
// made like the others, with the pool's hooks) and listens on it.
func (c *conn) listenConn(ctx context.Context) (*pgx.Conn, error) {
	if c.slots != nil {
		c.slots.take()
		defer c.slots.give()
	}
	pc, err := c.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	lc := pc.Hijack()
	if c.live != nil {
		c.live.remove(lc.PgConn())
		lc.PgConn().Conn().SetDeadline(time.Time{}) // a past fast call's
	}
	if _, err := lc.Exec(ctx, c.t.listen); err != nil {
		closeConn(lc)
		return nil, err
	}
	return lc, nil
}

// Close ends the calls in flight, stops the listener and closes the pool
// if it is the connection's own. It waits for that up to closeTimeout: a
// pool whose server stopped answering can take pgx 15s to close (it asks
// the server to cancel each interrupted statement), which it then does in
// the background.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		c.callsMu.Lock()
		c.closed = true
		for _, cancel := range c.calls {
			cancel()
		}
		c.callsMu.Unlock()
		c.cut.Store(true)
		if c.live != nil {
			c.live.cut()
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.ln.close()
			if c.owned {
				c.pool.Close()
			}
		}()
		t := time.NewTimer(closeTimeout)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
		}
	})
	return nil
}

// String describes the connection without its password.
func (c *conn) String() string { return "postgres conn (table " + c.t.name + ")" }
