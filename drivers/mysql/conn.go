package mysql

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/internal/inflight"
	"github.com/go-sql-driver/mysql"
)

// statements are a table's statements, prepared on a pool. database/sql
// prepares each again on every connection of the pool at its first use
// there, and keeps it: each call is then one round trip.
type statements struct {
	acquire, extend, release, transfer, inspect, poll *sql.Stmt

	value valueColumn // the table's value column, as found before preparing
}

func prepareStatements(ctx context.Context, db *sql.DB, t *table) (*statements, error) {
	var st statements
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&st.acquire, t.acquire}, {&st.extend, t.extend}, {&st.release, t.release},
		{&st.transfer, t.transfer}, {&st.inspect, t.inspect}, {&st.poll, t.poll},
	} {
		s, err := db.PrepareContext(ctx, p.sql)
		if err != nil {
			st.close()
			return nil, err
		}
		*p.stmt = s
	}
	return &st, nil
}

func (st *statements) close() {
	for _, s := range []*sql.Stmt{st.acquire, st.extend, st.release, st.transfer, st.inspect, st.poll} {
		if s != nil {
			s.Close()
		}
	}
}

// conn is one client's connection: a pool and its prepared statements,
// and, once the client first waits, a poller that wakes its waiters.
type conn struct {
	db      *sql.DB
	owned   bool // the pool and its statements are ours to close
	st      *statements
	t       *table
	timeout time.Duration // the request timeout
	sockets *sockets      // the pool's, if the driver dials them; nil otherwise
	poller  *poller

	calls     inflight.Calls // for Close to end
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

func newConn(db *sql.DB, owned bool, st *statements, t *table, timeout time.Duration) *conn {
	c := &conn{db: db, owned: owned, st: st, t: t, timeout: timeout}
	c.poller = newPoller(c)
	return c
}

// micros is ttl in microseconds (the server's resolution), rounded up,
// so that the server's lease is never shorter than asked.
func micros(ttl time.Duration) int64 {
	return int64((ttl + time.Microsecond - 1) / time.Microsecond)
}

// request returns the context of one call under ctx: it ends with ctx, at
// the request timeout (with errTimedOut as its cause), or when the
// connection closes. The call must call done when it returns.
//
// A call under a context that cannot end, on a pool whose sockets the
// driver dials, keeps ctx: the sockets' deadlines bound it by the request
// timeout and Close closes them, and go-sql-driver does not hand a
// context that cannot end to its connection's watcher goroutine, which
// spares the call two goroutine switches.
func (c *conn) request(ctx context.Context) (_ context.Context, done func()) {
	if ctx.Done() == nil && c.sockets != nil {
		return ctx, noop
	}
	return c.calls.Begin(ctx, c.timeout, errTimedOut)
}

func noop() {}

// fail marks err, the failure of a call under ctx, as errClosed if Close
// ended the call, and as [failure] does otherwise.
func (c *conn) fail(ctx context.Context, err error) error {
	deadlines := ctx.Done() == nil && c.sockets != nil // the sockets' deadlines bounded the call
	if c.calls.EndedByClose(ctx) || (deadlines && c.sockets.isClosed()) {
		return fmt.Errorf("%w: %w", errClosed, err)
	}
	if deadlines && (errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, sqldriver.ErrBadConn)) {
		// go-sql-driver says only "invalid connection", whether the server
		// stopped answering or the connection broke.
		return fmt.Errorf("mysql: %w: the connection broke, or the server did not answer within the request timeout of %v: %w", driver.ErrUnavailable, c.timeout, err)
	}
	return failure(ctx, err, c.timeout)
}

// fence runs stmt and returns the fence its LAST_INSERT_ID(expr) set: 0
// when the statement granted nothing.
func (c *conn) fence(ctx context.Context, stmt *sql.Stmt, args ...any) (uint64, error) {
	res, err := stmt.ExecContext(ctx, args...)
	if err != nil {
		return 0, c.fail(ctx, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, c.fail(ctx, err)
	}
	return uint64(id), nil
}

// Acquire makes one attempt to acquire key, in one statement.
func (c *conn) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	if err := c.st.value.check(value); err != nil {
		return driver.Lease{}, wrap(err)
	}
	ctx, done := c.request(ctx)
	defer done()
	us := micros(ttl)
	fence, err := c.fence(ctx, c.st.acquire, key, value, us, value, us)
	switch {
	case err != nil:
		return driver.Lease{}, err
	case fence == 0:
		return driver.Lease{}, driver.ErrHeld
	}
	return driver.Lease{Token: fence, Fenced: true}, nil
}

// Extend resets key's lease if value holds it, in one statement.
func (c *conn) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	ctx, done := c.request(ctx)
	defer done()
	fence, err := c.fence(ctx, c.st.extend, micros(ttl), key, value)
	switch {
	case err != nil:
		return err
	case fence == 0:
		return driver.ErrNotHeld
	}
	return nil
}

// Transfer gives key, held by value, to next, in one statement.
func (c *conn) Transfer(ctx context.Context, key, value, next string, ttl time.Duration) (driver.Lease, error) {
	if err := c.st.value.check(next); err != nil {
		return driver.Lease{}, wrap(err)
	}
	ctx, done := c.request(ctx)
	defer done()
	fence, err := c.fence(ctx, c.st.transfer, next, micros(ttl), key, value)
	switch {
	case err != nil:
		return driver.Lease{}, err
	case fence == 0:
		return driver.Lease{}, driver.ErrNotHeld
	}
	return driver.Lease{Token: fence, Fenced: true}, nil
}

// Release releases key if value holds it, in one statement.
func (c *conn) Release(ctx context.Context, key, value string) error {
	ctx, done := c.request(ctx)
	defer done()
	res, err := c.st.release.ExecContext(ctx, key, value)
	if err != nil {
		return c.fail(ctx, err)
	}
	n, err := res.RowsAffected()
	switch {
	case err != nil:
		return c.fail(ctx, err)
	case n == 0:
		return driver.ErrNotHeld
	}
	return nil
}

func (c *conn) Inspect(ctx context.Context, key string) (driver.Holder, bool, error) {
	ctx, done := c.request(ctx)
	defer done()
	var (
		h     driver.Holder
		fence uint64
		us    int64
	)
	err := c.st.inspect.QueryRowContext(ctx, key).Scan(&h.Value, &fence, &us)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return driver.Holder{}, false, nil
	case err != nil:
		return driver.Holder{}, false, c.fail(ctx, err)
	}
	h.TTL = time.Duration(max(us, 0)) * time.Microsecond
	h.Lease = driver.Lease{Token: fence, Fenced: true}
	return h, true, nil
}

func (c *conn) Ping(ctx context.Context) error {
	ctx, done := c.request(ctx)
	defer done()
	if err := c.db.PingContext(ctx); err != nil {
		return c.fail(ctx, err)
	}
	return nil
}

// Drop drops the lease table, for scratch tables, and refuses with
// [ErrNotScratch] for the default table or one the driver may not create.
func (c *conn) Drop(ctx context.Context) error {
	if c.t.scratch != nil {
		return fmt.Errorf("mysql: drop: %w", c.t.scratch)
	}
	ctx, done := c.request(ctx)
	defer done()
	if _, err := c.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+c.t.ident); err != nil {
		return c.fail(ctx, err)
	}
	return nil
}

// closeTimeout bounds how long Close waits for the pool to close.
const closeTimeout = time.Second

// Close ends the calls in flight, stops the poller, and closes the pool
// and its statements if they are the connection's own. It waits for that
// up to closeTimeout. sql.DB.Close waits for the queries in flight, which
// the cancelled calls end.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		c.calls.Close()
		if c.sockets != nil {
			c.db.SetMaxIdleConns(0) // closes the idle connections
			c.sockets.close()
		}
		c.poller.close()
		if c.owned {
			c.st.close()
			closeDB(c.db)
		}
	})
	return nil
}

// closeDB closes db, waiting for it up to closeTimeout. Past that it goes
// on in the background.
func closeDB(db *sql.DB) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		db.Close()
	}()
	t := time.NewTimer(closeTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// String describes the connection without its password.
func (c *conn) String() string { return "mysql conn (table " + c.t.name + ")" }
