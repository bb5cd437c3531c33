package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A call is one request of the driver on a pooled connection, bounded by
// the request timeout in one of two ways.
//
// On the fast path, the request timeout is the pooled connection's
// deadline, and the call runs under the caller's context (with the call's
// end attached, for the pool's hooks). It costs no timer of its own and no
// context to cancel, and pgx watches no context that cannot be cancelled.
// It is taken when the pool is the driver's own and one of its connections
// is free for the call (see slots), since then the pool hands over a
// connection without waiting.
//
// On the slow path, when every connection is in use or the pool is the
// caller's (from New), the call runs under a context that ends at the
// request timeout, which Close cancels (see conn.request).
type call struct {
	ctx   context.Context
	pc    *pgxpool.Conn
	until time.Time // the fast path's deadline; zero on the slow path
	slot  bool      // the call is counted in the pool's slots
	done  func()    // ends the slow path's context
}

// fast reports whether the call took the fast path.
func (cl *call) fast() bool { return !cl.until.IsZero() }

// callCtx is the context of a call on the fast path: the caller's, which
// pgx and the pool watch, and the call's end, which the pool's hooks read
// (see ownPool) to bound a ping or a new connection.
type callCtx struct {
	context.Context
	until time.Time
}

// untilKey is the key under which a callCtx answers its end.
type untilKey struct{}

// Value answers the call's end under untilKey, and the caller's values
// otherwise.
func (c *callCtx) Value(key any) any {
	if key == (untilKey{}) {
		return c.until
	}
	return c.Context.Value(key)
}

// untilOf returns the end of the fast-path call that ctx belongs to, if
// it does.
func untilOf(ctx context.Context) (time.Time, bool) {
	u, ok := ctx.Value(untilKey{}).(time.Time)
	return u, ok
}

// begin starts a call under ctx: a pooled connection, and the context to
// use it under. The caller runs its statement, then calls c.end, also
// when begin fails.
func (c *conn) begin(ctx context.Context) (call, error) {
	if c.slots != nil && !c.cut.Load() && c.slots.tryTake() {
		until := time.Now().Add(c.timeout)
		cl := call{ctx: &callCtx{Context: ctx, until: until}, until: until, slot: true}
		pc, err := c.pool.Acquire(cl.ctx)
		if err != nil {
			return cl, err
		}
		cl.pc = pc
		nc := pc.Conn().PgConn().Conn()
		nc.SetDeadline(until)
		if c.cut.Load() {
			// Close cut the connections short, perhaps before this one's
			// deadline was set.
			nc.SetDeadline(time.Now())
		}
		return cl, nil
	}
	ctx, done := c.request(ctx)
	cl := call{ctx: ctx, done: done}
	if c.slots != nil {
		// Counted while it waits in the pool, so that no fast call
		// counts on the connection it waits for.
		c.slots.take()
		cl.slot = true
	}
	pc, err := c.pool.Acquire(ctx)
	if err != nil {
		return cl, err
	}
	cl.pc = pc
	if c.live != nil {
		// The context bounds the call; a past call's deadline must not.
		pc.Conn().PgConn().Conn().SetDeadline(time.Time{})
	}
	return cl, nil
}

// end ends the call: it gives the connection back to the pool. A fast
// call's deadline stays on the connection, which is idle until the next
// call sets its own (see ownPool for the pool's own use of it).
func (c *conn) end(cl *call) {
	if cl.pc != nil {
		cl.pc.Release()
	}
	if cl.slot {
		c.slots.give()
	}
	if cl.done != nil {
		cl.done()
	}
}

// fail marks err, the failure of the call cl, as errClosed if Close cut
// the call short, as the request timeout's if the call's deadline passed,
// and as [failure] does otherwise.
func (c *conn) fail(cl *call, err error) error {
	if !cl.fast() {
		return c.failSlow(cl.ctx, err)
	}
	timedOut := pgconn.Timeout(err) || errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded)
	switch {
	case timedOut && c.cut.Load():
		return fmt.Errorf("%w: %w", errClosed, err)
	case timedOut && cl.ctx.Err() == nil && !time.Now().Before(cl.until):
		return requestTimedOut(err, c.timeout)
	}
	return failure(cl.ctx, err, c.timeout)
}

// slots counts the calls that use one of an own pool's connections or
// wait for one, so that a call that finds the count under the pool's size
// knows that the pool has a connection for it, or room to make one, and
// will not make it wait: that call takes the fast path. Calls that find
// none free take the slow path, are counted all the same, and wait in the
// pool. A counter, not a channel of tokens: 16 goroutines sending to and
// receiving from one channel contend for its lock, which cost the client
// 2-3% more CPU per operation (DESIGN.md, "The pool").
type slots struct {
	n   atomic.Int64
	max int64
}

// newSlots returns the count of a pool of size connections.
func newSlots(size int32) *slots { return &slots{max: int64(size)} }

// tryTake counts a call if the count is under the pool's size, and
// reports whether it did.
func (s *slots) tryTake() bool {
	for {
		n := s.n.Load()
		if n >= s.max {
			return false
		}
		if s.n.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// take counts a call whatever the count.
func (s *slots) take() { s.n.Add(1) }

// give ends a call that tryTake or take counted.
func (s *slots) give() { s.n.Add(-1) }

// live is the set of an own pool's connections, so that Close can cut the
// calls in flight on them short, whichever path they took.
type live struct {
	mu    sync.Mutex
	conns map[*pgconn.PgConn]struct{}
}

func (l *live) add(pc *pgconn.PgConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conns == nil {
		l.conns = make(map[*pgconn.PgConn]struct{})
	}
	l.conns[pc] = struct{}{}
}

func (l *live) remove(pc *pgconn.PgConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.conns, pc)
}

// cut makes the I/O of every connection fail from now on.
func (l *live) cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	for pc := range l.conns {
		pc.Conn().SetDeadline(now)
	}
}

// ownPool sets the hooks of a pool of the driver's own on cfg (a copy):
// the pool's ping of a connection idle for more than a second (pgxpool's
// default) and the making of a new connection end when the fast-path call
// that asked for them ends, and the pool's connections are kept in l.
//
// An idle connection keeps the deadline of the last fast call that used
// it, which may have passed: every call sets the connection's deadline
// once it has it (begin), the ping sets it first, and the listener clears
// it when it takes a connection for good. The pool does no other I/O on
// idle connections but closing them.
func ownPool(cfg *pgxpool.Config, l *live) {
	cfg.ShouldPing = func(ctx context.Context, p pgxpool.ShouldPingParams) bool {
		if p.IdleDuration <= time.Second {
			return false
		}
		u, _ := untilOf(ctx) // zero on the slow path, whose context bounds the ping
		p.Conn.PgConn().Conn().SetDeadline(u)
		return true
	}
	before := cfg.BeforeConnect
	cfg.BeforeConnect = func(ctx context.Context, cc *pgx.ConnConfig) error {
		if u, ok := untilOf(ctx); ok {
			left := time.Until(u)
			if left <= 0 {
				return context.DeadlineExceeded
			}
			if cc.ConnectTimeout == 0 || cc.ConnectTimeout > left {
				cc.ConnectTimeout = left
			}
		}
		if before != nil {
			return before(ctx, cc)
		}
		return nil
	}
	after := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		if u, ok := untilOf(ctx); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, u)
			defer cancel()
		}
		if after != nil {
			if err := after(ctx, conn); err != nil {
				return err
			}
		}
		l.add(conn.PgConn())
		return nil
	}
	beforeClose := cfg.BeforeClose
	cfg.BeforeClose = func(conn *pgx.Conn) {
		l.remove(conn.PgConn())
		if beforeClose != nil {
			beforeClose(conn)
		}
	}
}
