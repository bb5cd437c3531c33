// Package lock provides distributed locks with one small API over many
// backends, the way database/sql provides databases: a program imports the
// driver it wants for its side effect, opens a [Client] with a driver name
// and a DSN, and swaps backends by changing the import and the DSN.
//
//	import (
//		"github.com/distlock/lock"
//		_ "github.com/distlock/lock/drivers/memory" // registers "memory"
//	)
//
//	c, err := lock.Open("memory", "example")
//	...
//	l, err := c.Acquire(ctx, "invoice:42", lock.WithTTL(10*time.Second))
//	...
//	defer l.Release(ctx)
//
// # The promises
//
// Every driver keeps these, and the conformance suite (package conformance)
// checks them:
//
//  1. Mutual exclusion: while time.Now() is before [Lock.ValidUntil], no
//     other acquisition of the same key succeeds.
//  2. Deadlock freedom: a lock whose holder vanished becomes free after its
//     TTL, without anyone's help.
//  3. Fault tolerance (quorum drivers): acquire and release work while a
//     majority of nodes are up.
//  4. Ownership: only the holder can extend or release a lock.
//  5. Fencing (drivers that advertise it): tokens of one key strictly
//     increase with each acquisition.
//
// # Validity and fencing
//
// A lock with a TTL can outlive its holder's belief that it holds it: a
// process pause, a slow network or a clock jump can let the lease run out
// while the holder keeps working. [Lock.ValidUntil] is computed on the
// client's monotonic clock from a reading taken before the request was sent,
// minus an allowance for clock drift, so it never claims more than the
// backend granted; but only fencing tokens ([Lock.Token]), checked by the
// protected resource, make a stale holder harmless. See package fencing.
//
// # Division of labour
//
// The core (this package) owns what is the same for every backend: the
// random value of each acquisition, the validity clock, retries and waiting,
// auto-extension in [Client.Do], validation of keys, TTLs and options,
// counters ([Client.Stats]) and logging (through log/slog, silent on the
// hot path). A driver (package driver) speaks one backend's protocol and
// makes exactly one attempt per call.
package lock

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distlock/lock/driver"
)

var (
	driversMu sync.RWMutex
	drivers   = make(map[string]driver.Driver)
)

// Register makes a driver available under name to [Open]. Drivers call it
// from an init function. It panics if d is nil or if name is already
// registered, since either is a programming error.
func Register(name string, d driver.Driver) {
	driversMu.Lock()
	defer driversMu.Unlock()
	if d == nil {
		panic("lock: Register driver is nil")
	}
	if _, dup := drivers[name]; dup {
		panic("lock: Register called twice for driver " + name)
	}
	drivers[name] = d
}

// Drivers returns the sorted names of the registered drivers.
func Drivers() []string {
	driversMu.RLock()
	defer driversMu.RUnlock()
	names := make([]string, 0, len(drivers))
	for name := range drivers {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Open returns a [Client] for the backend that the driver registered as
// driverName finds at dsn. Drivers that parse their DSN up front report a
// malformed one here; Open never contacts the backend (use [Client.Ping] for
// that). Errors never repeat the DSN, which may hold a password.
func Open(driverName, dsn string) (*Client, error) {
	driversMu.RLock()
	d, ok := drivers[driverName]
	driversMu.RUnlock()
	if !ok {
		return nil, opError("open", "", fmt.Errorf("unknown driver %q (forgotten import?)", driverName))
	}
	c, err := d.OpenConnector(dsn)
	if err != nil {
		return nil, opError("open", "", fmt.Errorf("driver %q: %w", driverName, err))
	}
	return OpenConnector(c), nil
}

// OpenConnector returns a [Client] that uses c. It does not contact the
// backend; the first operation that needs the backend connects.
func OpenConnector(c driver.Connector) *Client {
	return &Client{connector: c}
}

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

	mu     sync.Mutex // serialises connecting and closing
	conn   atomic.Pointer[conn]
	closed atomic.Bool

	logger atomic.Pointer[slog.Logger]
	stats  counters

	turnsMu sync.Mutex
	turns   map[string]*turn // of keys with waiting Acquire calls
	nturns  atomic.Int32     // len(turns), read without turnsMu on the paths of uncontended locks
}

// conn is a connected driver.Conn with its optional interfaces resolved, so
// that the type assertions happen once, here.
type conn struct {
	driver.Conn
	extender   driver.Extender   // nil if unsupported
	waiter     driver.Waiter     // nil if unsupported
	transferer driver.Transferer // nil if unsupported
	pinger     driver.Pinger     // nil if unsupported
	inspector  driver.Inspector  // nil if unsupported
}

func newConn(dc driver.Conn) *conn {
	c := &conn{Conn: dc}
	c.extender, _ = dc.(driver.Extender)
	c.waiter, _ = dc.(driver.Waiter)
	c.transferer, _ = dc.(driver.Transferer)
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
		return nil, fmt.Errorf("connect: %w", err)
	}
	if dc == nil {
		return nil, errors.New("connect: driver returned a nil connection")
	}
	cn := newConn(dc)
	c.conn.Store(cn)
	return cn, nil
}

// SetLogger sets the logger the client reports unusual events to: a lock
// lost while [Client.Do] ran, a release or cleanup that failed. Successful
// operations are logged at debug level only. The default is
// [slog.Default]; nil restores it. SetLogger is safe to call at any time.
func (c *Client) SetLogger(l *slog.Logger) { c.logger.Store(l) }

func (c *Client) log() *slog.Logger {
	if l := c.logger.Load(); l != nil {
		return l
	}
	return slog.Default()
}

// Ping connects to the backend if the client has not yet, and checks that
// it answers where the driver can tell.
func (c *Client) Ping(ctx context.Context) error {
	cn, err := c.connect(ctx)
	if err != nil {
		return opError("ping", "", err)
	}
	if cn.pinger != nil {
		if err := cn.pinger.Ping(ctx); err != nil {
			return opError("ping", "", err)
		}
	}
	return nil
}

// Close closes the client's connection to the backend. Locks still held
// are not released: they expire by their TTL. Every later operation of the
// client, and of its locks, fails with [ErrClosed]. Closing a closed client
// does nothing and returns nil.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Swap(true) {
		return nil
	}
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

// Acquire acquires the lock on key, waiting while someone else holds it.
// It makes attempts as the retry strategy says ([WithRetry]; by default
// [DefaultRetry]) until it holds the lock, the strategy gives up, or ctx is
// done; on drivers that announce releases it wakes as soon as the key is
// released. An attempt that fails because the backend is unavailable is
// retried the same way, except that, if the attempt was made at a
// release's announcement, or if subscribing to releases failed, the next
// comes sooner if the strategy would wait longer (after 10ms, doubling
// with each further failure): nothing would announce that release again,
// and an unsubscribed waiter hears of none.
//
// Calls of one client waiting for the same key queue in arrival order: only
// the first in line tries the backend and listens for releases, and a call
// that finds others of its client waiting joins the back of the line
// without trying first. A release by this client wakes the first in line
// at once; on drivers that can transfer a lease (driver.Transferer), the
// release hands the lock straight over to it, as long as the run of such
// handovers on the key has lasted less than 20ms. (TryAcquire does not
// queue.)
//
// When it gives up, the error matches the last attempt's cause
// ([ErrNotAcquired] if the key was held, or the backend's error) and, if ctx
// ended the wait, ctx's error as well. A failed or cancelled acquisition
// leaves nothing held.
func (c *Client) Acquire(ctx context.Context, key string, opts ...Option) (*Lock, error) {
	o, err := apply(key, opts)
	if err != nil {
		return nil, opError("acquire", key, err)
	}
	return c.acquire(ctx, key, &o, true)
}

// TryAcquire makes exactly one attempt to acquire the lock on key. If
// someone else holds it, the error matches [ErrNotAcquired]; any other error
// means the attempt could not be made or completed, and leaves nothing held.
func (c *Client) TryAcquire(ctx context.Context, key string, opts ...Option) (*Lock, error) {
	o, err := apply(key, opts)
	if err != nil {
		return nil, opError("acquire", key, err)
	}
	return c.acquire(ctx, key, &o, false)
}

// acquire acquires key with checked options: once, or waiting as o.retry
// says.
//
// Waiting calls of one client for one key take turns (see turn): after a
// first attempt finds the key held, a call waits for the key's turn, and
// only the holder of the turn tries again and listens for releases.
func (c *Client) acquire(ctx context.Context, key string, o *options, wait bool) (res *Lock, _ error) {
	if c.closed.Load() {
		return nil, opError("acquire", key, ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return nil, opError("acquire", key, err)
	}
	cn, err := c.connect(ctx)
	if err != nil {
		return nil, opError("acquire", key, err)
	}
	var (
		watch driver.Watch
		t     *turn // the key's turn, once joined
		mine  bool  // whether this call holds t
	)
	defer func() {
		if watch != nil {
			watch.Close()
		}
		if mine {
			if res != nil {
				// Releases signalled so far were of earlier locks: the
				// next holder of the turn waits for this one's.
				select {
				case <-t.released:
				default:
				}
			}
			t.token <- res != nil
		}
		if t != nil {
			c.leaveTurn(key, t)
		}
	}()
	var (
		last    error // the cause of the last attempt that the context did not end
		attempt int   // attempts made, or counted while waiting for the turn
		pause   bool  // wait for a release or the strategy's delay before the next attempt
		woken   bool  // the last pause ended at a release (or a failed handover)
		failed  int   // attempts in a row since a wake-up that the backend failed
		unsub   int   // subscriptions to releases that failed, since the last that did not
	)
	if wait {
		// Other calls of this client wait for the key: queue behind them
		// rather than overtake them.
		if t = c.queuedTurn(key); t != nil {
			last = opError("acquire", key, ErrNotAcquired)
			acquired, n, err := awaitTurn(ctx, key, t, o, 1, last)
			if err != nil {
				return nil, err
			}
			mine, attempt, pause = true, n, acquired
		}
	}
	for {
		if pause {
			delay, _ := o.retry.Delay(attempt)
			if n := max(failed, unsub); n > 0 {
				delay = min(delay, wokenRetryDelay(n))
			}
			if mine && cn.transferer != nil {
				// Offer to take over the key when a lock of this client
				// that holds it is released.
				l, w, err := c.sleepOffering(ctx, key, t, o, delay, watch, last)
				if l != nil || err != nil {
					return l, err
				}
				woken = w
			} else {
				var released <-chan struct{}
				if t != nil {
					released = t.released
				}
				w, err := sleep(ctx, delay, watch, released)
				if err != nil {
					return nil, gaveUp(ctx, key, last)
				}
				woken = w
			}
		}
		attempt++
		var self *turn
		if mine {
			self = t
		}
		l, err := c.attempt(ctx, cn, key, o, self)
		if err == nil || !wait {
			return l, err
		}
		if ctx.Err() != nil {
			return nil, gaveUp(ctx, key, cmp.Or(last, err))
		}
		last = err
		if _, again := o.retry.Delay(attempt); !again {
			return nil, err
		}
		pause = true
		if !errors.Is(err, ErrNotAcquired) {
			// The backend failed: try again after the delay, or, if this
			// attempt answered a release, soon, since nothing will
			// announce that release again.
			if woken || failed > 0 {
				failed++
			}
			continue
		}
		failed = 0
		if t == nil {
			t = c.joinTurn(key)
			select {
			case <-t.token: // nobody else waits: go on at once
			default:
				acquired, n, err := awaitTurn(ctx, key, t, o, attempt, last)
				if err != nil {
					return nil, err
				}
				mine, attempt = true, n
				// If the last holder of the turn took the key, wait for
				// its release; if not, the key may be free by now.
				pause = acquired
				continue
			}
			mine = true
		}
		if watch == nil && cn.waiter != nil {
			// Subscribe, then try again at once: a release between the
			// failed attempt and the subscription would otherwise be missed.
			w, werr := cn.waiter.Watch(ctx, key)
			if werr == nil {
				watch, unsub = w, 0
				pause = false
				continue
			}
			// Try again soon rather than at the strategy's pace, which,
			// where releases are announced, may be slow; and back off if
			// subscribing keeps failing.
			c.log().DebugContext(ctx, "lock: watch failed; trying again", "key", key, "err", werr)
			unsub++
		}
	}
}

// gaveUp is the error of an Acquire whose context ended while it waited:
// it matches both the context's error and the last attempt's cause.
func gaveUp(ctx context.Context, key string, last error) error {
	var e *Error
	if errors.As(last, &e) {
		last = e.Err
	}
	if cause := context.Cause(ctx); cause != ctx.Err() {
		return opError("acquire", key, fmt.Errorf("%w: %w (last attempt: %w)", ctx.Err(), cause, last))
	}
	return opError("acquire", key, fmt.Errorf("%w (last attempt: %w)", ctx.Err(), last))
}

// sleep waits for d, for a release announced on w (if not nil) or on
// local (a release by this client), or for ctx to be done, whichever comes
// first. It reports whether a release ended the wait.
func sleep(ctx context.Context, d time.Duration, w driver.Watch, local <-chan struct{}) (released bool, _ error) {
	var announced <-chan struct{}
	if w != nil {
		announced = w.Released()
	}
	t := time.NewTimer(max(d, 0))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case <-t.C:
		return false, nil
	case <-announced:
	case <-local:
	}
	return true, nil
}

// wokenRetryDelay bounds the wait before the next attempt after n
// attempts in a row that the backend failed, the first of them made at a
// release's announcement, or after n failed subscriptions to releases:
// 10ms, doubling with each failure. A connection that broke while the
// waiter slept (a server restart, say) fails the first attempt after it,
// and the release that woke the waiter will not be announced again; a
// waiter whose subscription failed hears of no release at all. Waiting the
// strategy's delay, meant for a key found held and, where releases are
// announced, often long, could leave a free key waiting.
func wokenRetryDelay(n int) time.Duration {
	return 10 * time.Millisecond << min(n-1, 16)
}

// attempt makes one attempt to acquire key. self is the turn of key that
// the caller holds, if any: the undoing of a failed attempt does not signal
// it a release (the caller would take that for a release by another lock
// of this client, and try again at once).
func (c *Client) attempt(ctx context.Context, cn *conn, key string, o *options, self *turn) (*Lock, error) {
	value := newValue()
	start := time.Now()
	lease, err := cn.Acquire(ctx, key, value, o.ttl)
	if err != nil {
		if errors.Is(err, driver.ErrHeld) {
			c.stats.contended.Add(1)
			return nil, opError("acquire", key, translate(err, driver.ErrHeld, ErrNotAcquired))
		}
		c.stats.failed.Add(1)
		c.cleanup(ctx, cn, key, value, self)
		c.log().DebugContext(ctx, "lock: acquire attempt failed", "key", key, "err", err)
		return nil, opError("acquire", key, err)
	}
	l := c.grant(cn, key, value, lease, start, o)
	if l == nil {
		c.stats.failed.Add(1)
		c.cleanup(ctx, cn, key, value, self)
		return nil, opError("acquire", key, errTooLate)
	}
	c.stats.acquired.Add(1)
	return l, nil
}

// grant returns the Lock of value's lease on key, granted by a request
// sent at start, with the validity that o gives it, or nil if that
// validity has run out already.
func (c *Client) grant(cn *conn, key, value string, lease driver.Lease, start time.Time, o *options) *Lock {
	until := start.Add(o.ttl - drift(o.ttl, o.drift))
	if !time.Now().Before(until) {
		return nil
	}
	l := &Lock{c: c, cn: cn, key: key, value: value, lease: lease, start: start, drift: o.drift}
	l.until.Store(int64(until.Sub(start)))
	return l
}

// cleanupTimeout bounds the release of a lock that a failed acquisition
// (or a late extension) may have left behind.
const cleanupTimeout = 2 * time.Second

// cleanup releases key if value holds it, under its own timeout, since
// ctx may be the reason the operation failed, and tells the waiters of this
// client, but for the holder of quiet (if not nil), that key was released.
// It returns nil once value surely does not hold key.
func (c *Client) cleanup(ctx context.Context, cn *conn, key, value string, quiet *turn) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	err := cn.Release(ctx, key, value)
	if err == nil {
		c.releasedKey(key, quiet)
		return nil
	}
	if errors.Is(err, driver.ErrNotHeld) {
		return nil
	}
	c.log().WarnContext(ctx, "lock: cleanup failed; the key may stay held until its TTL runs out", "key", key, "err", err)
	return err
}

// Stats returns the client's counters since it was opened.
func (c *Client) Stats() Stats { return c.stats.snapshot() }
