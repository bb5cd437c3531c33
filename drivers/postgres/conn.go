package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// errClosed is returned by a connection's methods after Close.
var errClosed = errors.New("postgres: connection closed")

// conn is one client's connection: a pool for the lock statements and,
// once the client first waits, a listener on a dedicated connection.
type conn struct {
	pool  *pgxpool.Pool
	owned bool // the pool is ours to close
	t     *table
	ln    *listener

	mu      sync.Mutex
	watched map[string]time.Time // keys this connection marked as waited for, and when

	heldMu sync.Mutex
	held   map[string]struct{} // keys whose last attempt here was refused

	closeOnce sync.Once
}

var (
	_ driver.Conn       = (*conn)(nil)
	_ driver.Extender   = (*conn)(nil)
	_ driver.Transferer = (*conn)(nil)
	_ driver.Waiter     = (*conn)(nil)
	_ driver.Pinger     = (*conn)(nil)
	_ driver.Inspector  = (*conn)(nil)
)

func newConn(pool *pgxpool.Pool, owned bool, t *table) *conn {
	c := &conn{
		pool:    pool,
		owned:   owned,
		t:       t,
		watched: make(map[string]time.Time),
		held:    make(map[string]struct{}),
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

// wrap marks err as the backend's.
func wrap(err error) error { return fmt.Errorf("postgres: %w", err) }

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
	var fence int64
	err := c.pool.QueryRow(ctx, q, key, value, interval(ttl)).Scan(&fence)
	lease, err := leaseOf(fence, err, driver.ErrHeld)
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

// leaseOf is the outcome of a statement that returns the fence of a lease
// it granted, given the error of scanning it: the lease, or none if no row
// came back, or the backend's error.
func leaseOf(fence int64, err, none error) (driver.Lease, error) {
	switch {
	case err == nil:
		return driver.Lease{Token: uint64(fence), Fenced: true}, nil
	case errors.Is(err, pgx.ErrNoRows):
		return driver.Lease{}, none
	}
	return driver.Lease{}, wrap(err)
}

func (c *conn) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	tag, err := c.pool.Exec(ctx, c.t.extend, key, value, interval(ttl))
	switch {
	case err != nil:
		return wrap(err)
	case tag.RowsAffected() == 0:
		return driver.ErrNotHeld
	}
	return nil
}

// Transfer gives key, held by value, to next, in one statement.
func (c *conn) Transfer(ctx context.Context, key, value, next string, ttl time.Duration) (driver.Lease, error) {
	var fence int64
	err := c.pool.QueryRow(ctx, c.t.transfer, key, value, next, interval(ttl)).Scan(&fence)
	return leaseOf(fence, err, driver.ErrNotHeld)
}

func (c *conn) Release(ctx context.Context, key, value string) error {
	tag, err := c.pool.Exec(ctx, c.t.release, key, value)
	switch {
	case err != nil:
		return wrap(err)
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
	err := c.pool.QueryRow(ctx, c.t.inspect, key).Scan(&h.Value, &fence, &micros)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return driver.Holder{}, false, nil
	case err != nil:
		return driver.Holder{}, false, wrap(err)
	}
	h.TTL = time.Duration(max(micros, 0)) * time.Microsecond
	h.Lease = driver.Lease{Token: uint64(fence), Fenced: true}
	return h, true, nil
}

func (c *conn) Ping(ctx context.Context) error {
	if err := c.pool.Ping(ctx); err != nil {
		return wrap(err)
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
	if _, err := c.pool.Exec(ctx, c.t.watch, key); err != nil {
		w.Close()
		return nil, wrap(err)
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
	pc, err := c.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	lc := pc.Hijack()
	if _, err := lc.Exec(ctx, c.t.listen); err != nil {
		closeConn(lc)
		return nil, err
	}
	return lc, nil
}

// Close stops the listener, waiting for it, and closes the pool if it is
// the connection's own.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		c.ln.close()
		if c.owned {
			c.pool.Close()
		}
	})
	return nil
}

// String describes the connection without its password.
func (c *conn) String() string { return "postgres conn (table " + c.t.name + ")" }
