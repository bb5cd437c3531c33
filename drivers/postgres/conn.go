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
	flights map[string]*flight   // by key: the attempt in flight, if any
	watched map[string]time.Time // keys this connection marked as waited for, and when
	held    map[string]grant     // keys granted through this connection and not yet released through it

	closeOnce sync.Once
}

// flight is an attempt to acquire a key in flight, whose outcome callers
// that arrive meanwhile wait for. Its fields are guarded by conn.mu.
type flight struct {
	done    chan struct{} // made by the first caller to wait; closed when the outcome is known
	granted bool
	refused bool
}

var (
	_ driver.Conn      = (*conn)(nil)
	_ driver.Extender  = (*conn)(nil)
	_ driver.Waiter    = (*conn)(nil)
	_ driver.Pinger    = (*conn)(nil)
	_ driver.Inspector = (*conn)(nil)
)

func newConn(pool *pgxpool.Pool, owned bool, t *table) *conn {
	c := &conn{
		pool:    pool,
		owned:   owned,
		t:       t,
		flights: make(map[string]*flight),
		watched: make(map[string]time.Time),
		held:    make(map[string]grant),
	}
	c.ln = newListener(t.name, c.listenConn, c.stale)
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

// Acquire coalesces concurrent attempts on one key: while one is in
// flight, the others wait for its outcome instead of sending their own, so
// that a release that wakes many waiters of one client costs the server
// one attempt, not one per waiter. If that attempt was granted, the key is
// held by another value for the whole time a caller that arrived
// meanwhile has been waiting, and the caller reports it held. If it was
// refused or failed, its outcome may predate the caller: the caller then
// takes the outcome of the next attempt, which is sent after it arrived, or
// sends its own. So each call still reports the state of the key at some
// instant during the call, and makes at most one attempt.
func (c *conn) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	for sentBefore := true; ; sentBefore = false {
		c.mu.Lock()
		f := c.flights[key]
		if f == nil {
			return c.fly(ctx, key, value, ttl) // unlocks c.mu
		}
		if f.done == nil {
			f.done = make(chan struct{})
		}
		c.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return driver.Lease{}, wrap(ctx.Err())
		}
		switch {
		case f.granted, f.refused && !sentBefore:
			return driver.Lease{}, driver.ErrHeld
		case !sentBefore:
			// The attempt failed; this call's outcome is its own.
			return c.acquire(ctx, key, value, ttl)
		}
		// The attempt was sent before this call began and was refused or
		// failed: wait for the next one, or make it.
	}
}

// fly makes an attempt that callers arriving meanwhile can wait for. c.mu
// must be held; fly unlocks it.
func (c *conn) fly(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	f := new(flight)
	c.flights[key] = f
	c.mu.Unlock()
	sent := time.Now()
	lease, err := c.acquire(ctx, key, value, ttl)
	c.mu.Lock()
	if err == nil {
		c.remember(key, grant{value: value, until: sent.Add(ttl - ttl/50 - 2*time.Millisecond)})
	}
	f.granted = err == nil
	f.refused = errors.Is(err, driver.ErrHeld)
	delete(c.flights, key)
	if f.done != nil {
		close(f.done)
	}
	c.mu.Unlock()
	return lease, err
}

// grant is a lease granted through a connection: by until, on this
// process's monotonic clock, it has surely not run out on the server.
type grant struct {
	value string
	until time.Time
}

// heldKeys bounds how many grants a connection remembers for [conn.stale].
const heldKeys = 4096

// remember records a grant of key. Locks left to run out are forgotten
// when they have, so that the record stays small. c.mu must be held.
func (c *conn) remember(key string, g grant) {
	if len(c.held) >= heldKeys {
		now := time.Now()
		for k, old := range c.held {
			if !now.Before(old.until) {
				delete(c.held, k)
			}
		}
		if len(c.held) >= heldKeys {
			clear(c.held) // forgetting only costs waiters a useless wake-up
		}
	}
	c.held[key] = g
}

// stale reports whether a release of key that is being announced now
// surely happened before a lease on it that this connection granted and
// that is still running: no release of that lease has been sent yet (it
// would have gone through this connection, and Release forgets the grant
// before it sends anything), and nobody else can end it, so the announced
// release came before the grant. Its waiters need not wake to find the key
// held: that release and the next one, which is announced, reach them as
// one. (If the lease runs out instead, nothing is announced either way.)
// This spares the waiters of one client the wake-up a release causes after
// another of its callers has already taken the key again.
func (c *conn) stale(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, ok := c.held[key]
	if ok && !time.Now().Before(g.until) {
		delete(c.held, key)
		return false
	}
	return ok
}

// acquire makes one attempt to acquire key.
func (c *conn) acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	var fence int64
	err := c.pool.QueryRow(ctx, c.t.acquire, key, value, interval(ttl)).Scan(&fence)
	switch {
	case err == nil:
		return driver.Lease{Token: uint64(fence), Fenced: true}, nil
	case errors.Is(err, pgx.ErrNoRows):
		return driver.Lease{}, driver.ErrHeld
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

func (c *conn) Release(ctx context.Context, key, value string) error {
	c.mu.Lock()
	if g, ok := c.held[key]; ok && g.value == value {
		delete(c.held, key)
	}
	c.mu.Unlock()
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
