package lock_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/memory"
)

// --- A driver the tests control -------------------------------------------

// scriptedConn is a driver.Conn whose answers a test scripts. It records
// every call. It implements neither driver.Extender nor driver.Waiter;
// extendingConn adds the first. The scripts are set before the client is
// used and not changed after; nil means "succeed at once".
type scriptedConn struct {
	onAcquire func(ctx context.Context, n int, value string) (driver.Lease, error)
	onRelease func(ctx context.Context, n int) error
	onExtend  func(ctx context.Context, n int) error

	mu       sync.Mutex
	acquires []call
	releases []call
	extends  []call
}

// call is one recorded driver call; n in the scripts counts them from 1.
type call struct {
	at          time.Time
	key, value  string
	ttl         time.Duration
	ctxErr      error // the context's error when the call was made
	hasDeadline bool  // whether the context had a deadline
}

var (
	_ driver.Conn     = (*scriptedConn)(nil)
	_ driver.Extender = extendingConn{}
)

func (c *scriptedConn) record(list *[]call, ctx context.Context, key, value string, ttl time.Duration) int {
	_, dl := ctx.Deadline()
	c.mu.Lock()
	defer c.mu.Unlock()
	*list = append(*list, call{at: time.Now(), key: key, value: value, ttl: ttl, ctxErr: ctx.Err(), hasDeadline: dl})
	return len(*list)
}

func (c *scriptedConn) calls(list *[]call) []call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(*list)
}

func (c *scriptedConn) acquireCalls() []call { return c.calls(&c.acquires) }
func (c *scriptedConn) releaseCalls() []call { return c.calls(&c.releases) }
func (c *scriptedConn) extendCalls() []call  { return c.calls(&c.extends) }

func (c *scriptedConn) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	n := c.record(&c.acquires, ctx, key, value, ttl)
	if c.onAcquire == nil {
		return driver.Lease{}, nil
	}
	return c.onAcquire(ctx, n, value)
}

func (c *scriptedConn) Release(ctx context.Context, key, value string) error {
	n := c.record(&c.releases, ctx, key, value, 0)
	if c.onRelease == nil {
		return nil
	}
	return c.onRelease(ctx, n)
}

func (c *scriptedConn) Close() error { return nil }

// extendingConn is a scriptedConn that implements driver.Extender.
type extendingConn struct{ *scriptedConn }

func (c extendingConn) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	n := c.record(&c.extends, ctx, key, value, ttl)
	if c.onExtend == nil {
		return nil
	}
	return c.onExtend(ctx, n)
}

// waitingConn is a scriptedConn that implements driver.Waiter with watches
// that never fire, and counts open watches.
type waitingConn struct {
	*scriptedConn
	watches, open atomic.Int32
	closeDelay    time.Duration // how long a watch's Close takes
}

var _ driver.Waiter = (*waitingConn)(nil)

func (c *waitingConn) Watch(context.Context, string) (driver.Watch, error) {
	c.watches.Add(1)
	c.open.Add(1)
	return silentWatch{c}, nil
}

type silentWatch struct{ c *waitingConn }

func (silentWatch) Released() <-chan struct{} { return nil }
func (w silentWatch) Close() error {
	time.Sleep(w.c.closeDelay)
	w.c.open.Add(-1)
	return nil
}

// announcingConn is a scriptedConn that implements driver.Waiter with
// watches that fire when the test sends on released.
type announcingConn struct {
	*scriptedConn
	released chan struct{}
}

func (c *announcingConn) Watch(context.Context, string) (driver.Watch, error) {
	return announcingWatch{c}, nil
}

type announcingWatch struct{ c *announcingConn }

func (w announcingWatch) Released() <-chan struct{} { return w.c.released }
func (announcingWatch) Close() error                { return nil }

// unsubscribableConn is an announcingConn whose first fail Watch calls
// fail (all of them if fail < 0).
type unsubscribableConn struct {
	*announcingConn
	fail    int
	watches atomic.Int32
}

func (c *unsubscribableConn) Watch(ctx context.Context, key string) (driver.Watch, error) {
	if n := int(c.watches.Add(1)); c.fail < 0 || n <= c.fail {
		return nil, errBackendDown
	}
	return c.announcingConn.Watch(ctx, key)
}

// scriptedConnector hands out one connection, after failing the first
// failures calls to Connect, and counts the calls.
type scriptedConnector struct {
	conn     driver.Conn
	failures int
	connects atomic.Int32
}

var errConnect = errors.New("connection refused")

func (c *scriptedConnector) Connect(context.Context) (driver.Conn, error) {
	if int(c.connects.Add(1)) <= c.failures {
		return nil, errConnect
	}
	return c.conn, nil
}

// recordingDriver is a driver that records the DSNs it is asked to parse
// and hands out one scriptedConnector.
type recordingDriver struct {
	connector *scriptedConnector
	mu        *sync.Mutex
	dsns      *[]string
}

func (d recordingDriver) OpenConnector(dsn string) (driver.Connector, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	*d.dsns = append(*d.dsns, dsn)
	return d.connector, nil
}

// badDSNDriver is a driver whose OpenConnector refuses every DSN.
type badDSNDriver struct{ err error }

func (d badDSNDriver) OpenConnector(string) (driver.Connector, error) { return nil, d.err }

// backendError is an error of the backend's own type, to check that it
// stays reachable with errors.As.
type backendError struct{ msg string }

func (e *backendError) Error() string { return e.msg }

var errBackendDown = &backendError{"backend down"}

func heldAlways(context.Context, int, string) (driver.Lease, error) {
	return driver.Lease{}, driver.ErrHeld
}

var quiet = slog.New(slog.DiscardHandler)

// openScripted returns a client on sc, with driver.Extender if extend.
func openScripted(t *testing.T, sc *scriptedConn, extend bool) *lock.Client {
	t.Helper()
	var dc driver.Conn = sc
	if extend {
		dc = extendingConn{sc}
	}
	c := lock.OpenConnector(&scriptedConnector{conn: dc})
	c.SetLogger(quiet)
	t.Cleanup(func() { c.Close() })
	return c
}

// openMemory returns a client on store.
func openMemory(t *testing.T, store *memory.Store) *lock.Client {
	t.Helper()
	c := lock.OpenConnector(store)
	c.SetLogger(quiet)
	t.Cleanup(func() { c.Close() })
	return c
}

// mustAcquire acquires key with TryAcquire or fails the test.
func mustAcquire(t *testing.T, c *lock.Client, key string, opts ...lock.Option) *lock.Lock {
	t.Helper()
	l, err := c.TryAcquire(context.Background(), key, opts...)
	if err != nil {
		t.Fatalf("TryAcquire(%q): %v", key, err)
	}
	return l
}

// driftOf is the documented drift allowance: ttl*factor + 2ms.
func driftOf(ttl time.Duration, factor float64) time.Duration {
	return time.Duration(float64(ttl)*factor) + 2*ms
}

var driverSeq atomic.Int64

// uniqueDriverName returns a driver name no other test (or run, with
// -count) registers.
func uniqueDriverName(t *testing.T) string {
	return fmt.Sprintf("%s-%d", t.Name(), driverSeq.Add(1))
}

// --- Memory connections the tests count ------------------------------------

// countingConn is a memory store's connection that counts acquisition
// attempts.
type countingConn struct {
	driver.Conn
	attempts atomic.Int64
}

func (c *countingConn) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	c.attempts.Add(1)
	return c.Conn.Acquire(ctx, key, value, ttl)
}

func (c *countingConn) Watch(ctx context.Context, key string) (driver.Watch, error) {
	return c.Conn.(driver.Waiter).Watch(ctx, key)
}

// openCounting returns a client on store whose attempts cc counts.
func openCounting(t *testing.T, store *memory.Store) (*lock.Client, *countingConn) {
	t.Helper()
	dc, err := store.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cc := &countingConn{Conn: dc}
	c := lock.OpenConnector(&scriptedConnector{conn: cc})
	c.SetLogger(quiet)
	t.Cleanup(func() { c.Close() })
	return c, cc
}

// acquired is what a waiter started by startWaiters got: its number, in
// the order started, and its lock (nil if Acquire failed, which the test
// is told of).
type acquired struct {
	i int
	l *lock.Lock
}

// startWaiters starts n calls of c.Acquire(key), one after another, each
// once the previous one waits, so that they queue in that order. Each
// reports on the channel returned when its Acquire returns.
func startWaiters(t *testing.T, c *lock.Client, key string, n int, opts ...lock.Option) <-chan acquired {
	t.Helper()
	got := make(chan acquired, n)
	for i := range n {
		go func() {
			l, err := c.Acquire(context.Background(), key, opts...)
			if err != nil {
				t.Error(err)
			}
			got <- acquired{i, l}
		}()
		synctest.Wait()
	}
	return got
}

// transferConn is a countingConn that also hands leases over, counting
// the handovers, and blocks each one until unblock is closed (if set).
type transferConn struct {
	*countingConn
	transfers atomic.Int64
	unblock   chan struct{}
}

func (c *transferConn) Transfer(ctx context.Context, key, value, next string, ttl time.Duration) (driver.Lease, error) {
	c.transfers.Add(1)
	if c.unblock != nil {
		<-c.unblock
	}
	return c.Conn.(driver.Transferer).Transfer(ctx, key, value, next, ttl)
}

// openTransfer returns a client on store that hands leases over.
func openTransfer(t *testing.T, store *memory.Store, unblock chan struct{}) (*lock.Client, *transferConn) {
	t.Helper()
	dc, err := store.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tc := &transferConn{countingConn: &countingConn{Conn: dc}, unblock: unblock}
	c := lock.OpenConnector(&scriptedConnector{conn: tc})
	c.SetLogger(quiet)
	t.Cleanup(func() { c.Close() })
	return c, tc
}
