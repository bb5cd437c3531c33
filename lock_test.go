package lock_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

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
}

var _ driver.Waiter = (*waitingConn)(nil)

func (c *waitingConn) Watch(context.Context, string) (driver.Watch, error) {
	c.watches.Add(1)
	c.open.Add(1)
	return silentWatch{c}, nil
}

type silentWatch struct{ c *waitingConn }

func (silentWatch) Released() <-chan struct{} { return nil }
func (w silentWatch) Close() error            { w.c.open.Add(-1); return nil }

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

// --- Registry --------------------------------------------------------------

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

func TestRegister_nilDriverPanics(t *testing.T) {
	name := uniqueDriverName(t)
	mustPanic(t, "Register(name, nil)", func() { lock.Register(name, nil) })
	if slices.Contains(lock.Drivers(), name) {
		t.Errorf("Drivers() lists %q after registering nil failed", name)
	}
}

func TestRegister_duplicateNamePanics(t *testing.T) {
	name := uniqueDriverName(t)
	lock.Register(name, badDSNDriver{err: errors.New("first")})
	mustPanic(t, "a second Register of "+name, func() { lock.Register(name, badDSNDriver{err: errors.New("second")}) })
	mustPanic(t, "a second Register of memory", func() { lock.Register("memory", memory.Driver{}) })

	// The first registration stands.
	_, err := lock.Open(name, "")
	if err == nil || !strings.Contains(err.Error(), "first") {
		t.Errorf("Open(%q) = %v, want the first driver's error", name, err)
	}
}

func TestDrivers_sortedAndComplete(t *testing.T) {
	a, b := "zz-"+uniqueDriverName(t), "aa-"+uniqueDriverName(t)
	lock.Register(a, badDSNDriver{})
	lock.Register(b, badDSNDriver{})
	names := lock.Drivers()
	if !slices.IsSorted(names) {
		t.Errorf("Drivers() = %q, not sorted", names)
	}
	for _, want := range []string{"memory", a, b} {
		if !slices.Contains(names, want) {
			t.Errorf("Drivers() = %q, missing %q", names, want)
		}
	}
	names[0] = "changed by the caller"
	if slices.Contains(lock.Drivers(), "changed by the caller") {
		t.Error("Drivers() returns the registry's own slice")
	}
}

func TestOpen_unknownDriver(t *testing.T) {
	c, err := lock.Open("no-such-driver", "redis://:s3cret@host")
	if c != nil || err == nil {
		t.Fatalf("Open of an unknown driver = %v, %v; want an error", c, err)
	}
	if !strings.Contains(err.Error(), "forgotten import") {
		t.Errorf("error %q does not name the likely fix (forgotten import)", err)
	}
	if !strings.Contains(err.Error(), "no-such-driver") {
		t.Errorf("error %q does not name the driver", err)
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error %q repeats the DSN's password", err)
	}
	var e *lock.Error
	if !errors.As(err, &e) || e.Op != "open" {
		t.Errorf("errors.As(*lock.Error) = %v, %+v; want Op open", errors.As(err, &e), e)
	}
}

func TestOpen_connectorFailsWithoutEchoingDSN(t *testing.T) {
	name := uniqueDriverName(t)
	errParse := errors.New("malformed DSN")
	lock.Register(name, badDSNDriver{err: errParse})
	const dsn = "redis://:s3cret@host:6379/0"
	c, err := lock.Open(name, dsn)
	if c != nil || err == nil {
		t.Fatalf("Open = %v, %v; want the connector's error", c, err)
	}
	if !errors.Is(err, errParse) {
		t.Errorf("Open: err = %v, want it to match the connector's error", err)
	}
	if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "host:6379") {
		t.Errorf("Open: error %q repeats the DSN", err)
	}
}

func TestOpen_parsesTheDSNOnceAndConnectsAtFirstUse(t *testing.T) {
	name := uniqueDriverName(t)
	var dsns []string
	d := recordingDriver{connector: &scriptedConnector{conn: &scriptedConn{}}, mu: new(sync.Mutex), dsns: &dsns}
	lock.Register(name, d)
	parsed := func() []string { d.mu.Lock(); defer d.mu.Unlock(); return slices.Clone(dsns) }

	c, err := lock.Open(name, "the-dsn")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := parsed(); !slices.Equal(got, []string{"the-dsn"}) {
		t.Fatalf("Open had the driver parse %q; want just \"the-dsn\"", got)
	}
	if n := d.connector.connects.Load(); n != 0 {
		t.Fatalf("Open connected %d times; want 0 until first use", n)
	}
	for range 3 {
		l := mustAcquire(t, c, "k")
		if err := l.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n := d.connector.connects.Load(); n != 1 {
		t.Errorf("Connect called %d times over three operations, want 1", n)
	}
	if got := parsed(); len(got) != 1 {
		t.Errorf("the driver parsed %d DSNs over three operations, want 1", len(got))
	}
}

func TestOpenConnector_connectsOnFirstUseOnly(t *testing.T) {
	sc := &scriptedConn{}
	conn := &scriptedConnector{conn: sc}
	c := lock.OpenConnector(conn)
	defer c.Close()
	if n := conn.connects.Load(); n != 0 {
		t.Fatalf("OpenConnector called Connect %d times, want 0", n)
	}
	l := mustAcquire(t, c, "k")
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, c, "k2")
	if n := conn.connects.Load(); n != 1 {
		t.Errorf("Connect called %d times, want 1", n)
	}
}

func TestOpenConnector_failedConnectRetriedAtNextOperation(t *testing.T) {
	sc := &scriptedConn{}
	conn := &scriptedConnector{conn: sc, failures: 2}
	c := lock.OpenConnector(conn)
	defer c.Close()
	for i := range 2 {
		_, err := c.TryAcquire(context.Background(), "k")
		if !errors.Is(err, errConnect) {
			t.Errorf("TryAcquire %d: err = %v, want the connect error", i+1, err)
		}
		if errors.Is(err, lock.ErrNotAcquired) {
			t.Errorf("TryAcquire %d: a connect failure matches ErrNotAcquired", i+1)
		}
	}
	mustAcquire(t, c, "k")
	if n := conn.connects.Load(); n != 3 {
		t.Errorf("Connect called %d times, want 3 (two failures, one success)", n)
	}
}

// --- Validity --------------------------------------------------------------

func TestTryAcquire_validUntilIsStartPlusTTLMinusDrift(t *testing.T) {
	tests := []struct {
		name   string
		ttl    time.Duration
		opts   []lock.Option
		delay  time.Duration // how long the driver takes to answer
		factor float64
	}{
		{"instant answer", 10 * time.Second, nil, 0, lock.DefaultDriftFactor},
		{"slow answer", 10 * time.Second, nil, 3 * time.Second, lock.DefaultDriftFactor},
		{"answer 1ns before the validity ends", time.Second, nil, time.Second - 12*ms - 1, lock.DefaultDriftFactor},
		{"drift factor zero", time.Second, []lock.Option{lock.WithDriftFactor(0)}, 100 * ms, 0},
		{"drift factor a quarter", time.Second, []lock.Option{lock.WithDriftFactor(0.25)}, 100 * ms, 0.25},
		{"MinTTL", lock.MinTTL, nil, ms, lock.DefaultDriftFactor},
		{"MaxTTL", lock.MaxTTL, nil, time.Hour, lock.DefaultDriftFactor},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sc := &scriptedConn{onAcquire: func(context.Context, int, string) (driver.Lease, error) {
					time.Sleep(tt.delay)
					return driver.Lease{}, nil
				}}
				c := openScripted(t, sc, false)
				start := time.Now()
				l, err := c.TryAcquire(context.Background(), "k", append(tt.opts, lock.WithTTL(tt.ttl))...)
				if err != nil {
					t.Fatalf("TryAcquire: %v", err)
				}
				if got := time.Since(start); got != tt.delay {
					t.Fatalf("TryAcquire took %v, want the driver's %v", got, tt.delay)
				}
				want := start.Add(tt.ttl - driftOf(tt.ttl, tt.factor))
				if got := l.ValidUntil(); !got.Equal(want) {
					t.Errorf("ValidUntil = start+%v, want start+%v (ttl %v - drift %v, from before the call)",
						got.Sub(start), want.Sub(start), tt.ttl, driftOf(tt.ttl, tt.factor))
				}
			})
		})
	}
}

func TestTryAcquire_answerAfterValidityFails(t *testing.T) {
	const ttl = time.Second
	validity := ttl - driftOf(ttl, lock.DefaultDriftFactor)
	for _, delay := range []time.Duration{validity, validity + 1, ttl, 5 * time.Second} {
		t.Run(delay.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sc := &scriptedConn{onAcquire: func(context.Context, int, string) (driver.Lease, error) {
					time.Sleep(delay)
					return driver.Lease{}, nil
				}}
				c := openScripted(t, sc, false)
				l, err := c.TryAcquire(context.Background(), "k", lock.WithTTL(ttl))
				if err == nil || l != nil {
					t.Fatalf("TryAcquire = %v, %v; want an error: the answer came after the validity", l, err)
				}
				if errors.Is(err, lock.ErrNotAcquired) {
					t.Errorf("err = %v matches ErrNotAcquired; nobody else holds the key", err)
				}
				acq, rel := sc.acquireCalls(), sc.releaseCalls()
				if len(rel) != 1 || rel[0].value != acq[0].value || rel[0].key != "k" {
					t.Errorf("releases = %+v; want one cleanup release of value %q", rel, acq[0].value)
				}
				if got, want := c.Stats(), (lock.Stats{Failed: 1}); got != want {
					t.Errorf("Stats = %+v, want %+v", got, want)
				}
			})
		})
	}
}

func TestTryAcquire_backendError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sc := &scriptedConn{onAcquire: func(context.Context, int, string) (driver.Lease, error) {
		cancel() // the caller gives up while the request is out
		return driver.Lease{}, fmt.Errorf("node 1: %w", errBackendDown)
	}}
	c := openScripted(t, sc, false)
	l, err := c.TryAcquire(ctx, "k")
	if l != nil || err == nil {
		t.Fatalf("TryAcquire = %v, %v; want the backend's error", l, err)
	}
	if errors.Is(err, lock.ErrNotAcquired) {
		t.Errorf("err = %v matches ErrNotAcquired; a backend error must not", err)
	}
	if !errors.Is(err, errBackendDown) {
		t.Errorf("err = %v; errors.Is does not reach the backend's error", err)
	}
	var be *backendError
	if !errors.As(err, &be) || be != errBackendDown {
		t.Errorf("errors.As(err, *backendError) = %v; want the backend's error", be)
	}
	acq, rel := sc.acquireCalls(), sc.releaseCalls()
	if len(rel) != 1 {
		t.Fatalf("releases = %+v, want one cleanup release", rel)
	}
	if rel[0].value != acq[0].value {
		t.Errorf("cleanup released value %q, want the attempt's %q", rel[0].value, acq[0].value)
	}
	if rel[0].ctxErr != nil {
		t.Errorf("cleanup ran under a context that was already done (%v); want its own", rel[0].ctxErr)
	}
	if !rel[0].hasDeadline {
		t.Error("cleanup ran under a context without a deadline; want its own short timeout")
	}
	if got, want := c.Stats(), (lock.Stats{Failed: 1}); got != want {
		t.Errorf("Stats = %+v, want %+v", got, want)
	}
}

func TestTryAcquire_heldGivesErrNotAcquired(t *testing.T) {
	wrapped := fmt.Errorf("3 of 5 nodes: %w", driver.ErrHeld)
	for _, held := range []error{driver.ErrHeld, wrapped} {
		t.Run(held.Error(), func(t *testing.T) {
			sc := &scriptedConn{onAcquire: func(context.Context, int, string) (driver.Lease, error) {
				return driver.Lease{}, held
			}}
			c := openScripted(t, sc, false)
			_, err := c.TryAcquire(context.Background(), "k")
			if !errors.Is(err, lock.ErrNotAcquired) {
				t.Errorf("err = %v, want ErrNotAcquired", err)
			}
			// A wrapped sentinel says more than the sentinel: keep it.
			if held != driver.ErrHeld && !errors.Is(err, held) {
				t.Errorf("err = %v; the driver's error is not reachable", err)
			}
			if got, want := c.Stats(), (lock.Stats{Contended: 1}); got != want {
				t.Errorf("Stats = %+v, want %+v", got, want)
			}
		})
	}
}

func TestTryAcquire_freshValueEachTime(t *testing.T) {
	sc := &scriptedConn{}
	c := openScripted(t, sc, false)
	const n = 1000
	for range n {
		mustAcquire(t, c, "k")
	}
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]{27}$`)
	seen := make(map[string]bool, n)
	for _, a := range sc.acquireCalls() {
		if !valid.MatchString(a.value) {
			t.Fatalf("value %q is not 27 characters of URL-safe base64", a.value)
		}
		if b, err := base64.RawURLEncoding.DecodeString(a.value); err != nil || len(b) != 20 {
			t.Fatalf("value %q decodes to %d bytes, %v; want 20 random bytes", a.value, len(b), err)
		}
		if seen[a.value] {
			t.Fatalf("value %q used twice", a.value)
		}
		seen[a.value] = true
	}
	if len(seen) != n {
		t.Errorf("%d distinct values over %d acquisitions", len(seen), n)
	}
}

func TestLock_releaseAndExtendUseTheAcquisitionsValue(t *testing.T) {
	sc := &scriptedConn{}
	c := openScripted(t, sc, true)
	l := mustAcquire(t, c, "k", lock.WithTTL(time.Minute))
	if err := l.Extend(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	v := sc.acquireCalls()[0].value
	if e := sc.extendCalls(); len(e) != 1 || e[0].value != v || e[0].key != "k" || e[0].ttl != time.Minute {
		t.Errorf("extend calls = %+v, want one for k/%s/1m", e, v)
	}
	if r := sc.releaseCalls(); len(r) != 1 || r[0].value != v || r[0].key != "k" {
		t.Errorf("release calls = %+v, want one for k/%s", r, v)
	}
}

func TestLock_tokenFromLease(t *testing.T) {
	sc := &scriptedConn{onAcquire: func(_ context.Context, n int, _ string) (driver.Lease, error) {
		if n == 1 {
			return driver.Lease{Token: 41, Fenced: true}, nil
		}
		return driver.Lease{}, nil
	}}
	c := openScripted(t, sc, false)
	if tok, ok := mustAcquire(t, c, "k").Token(); !ok || tok != 41 {
		t.Errorf("Token() = %v, %v; want 41, true", tok, ok)
	}
	if _, ok := mustAcquire(t, c, "k").Token(); ok {
		t.Error("Token() reports a token the driver did not give")
	}
}

// --- Acquire: waiting ------------------------------------------------------

func TestAcquire_wakesOnRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		a, b := openMemory(t, store), openMemory(t, store)
		ctx := context.Background()
		la := mustAcquire(t, a, "k", lock.WithTTL(time.Hour))

		type result struct {
			l   *lock.Lock
			err error
			at  time.Time
		}
		done := make(chan result, 1)
		go func() {
			l, err := b.Acquire(ctx, "k", lock.WithRetry(lock.FixedDelay(time.Hour)))
			done <- result{l, err, time.Now()}
		}()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		select {
		case r := <-done:
			t.Fatalf("Acquire returned %v, %v while the key was held", r.l, r.err)
		default:
		}
		released := time.Now()
		if err := la.Release(ctx); err != nil {
			t.Fatal(err)
		}
		r := <-done
		if r.err != nil {
			t.Fatalf("Acquire: %v", r.err)
		}
		if !r.at.Equal(released) {
			t.Errorf("waiter acquired %v after the release; want at once (its poll interval is 1h)", r.at.Sub(released))
		}
		if err := r.l.Release(ctx); err != nil {
			t.Error(err)
		}
	})
}

func TestAcquire_retriesRightAfterSubscribing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The key is released between the failed attempt and the
		// subscription: no wake-up will come, so Acquire must try again
		// once subscribed instead of sleeping for its 1h delay.
		sc := &scriptedConn{onAcquire: func(_ context.Context, n int, _ string) (driver.Lease, error) {
			if n == 1 {
				return driver.Lease{}, driver.ErrHeld
			}
			return driver.Lease{}, nil
		}}
		wc := &waitingConn{scriptedConn: sc}
		c := lock.OpenConnector(&scriptedConnector{conn: wc})
		defer c.Close()
		start := time.Now()
		if _, err := c.Acquire(context.Background(), "k", lock.WithRetry(lock.FixedDelay(time.Hour))); err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != 0 {
			t.Errorf("Acquire took %v; want an attempt right after subscribing", got)
		}
		if w, o := wc.watches.Load(), wc.open.Load(); w != 1 || o != 0 {
			t.Errorf("%d watches opened, %d left open; want 1 opened and closed", w, o)
		}
	})
}

func TestAcquire_closesWatchWhenGivingUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		wc := &waitingConn{scriptedConn: &scriptedConn{onAcquire: heldAlways}}
		c := lock.OpenConnector(&scriptedConnector{conn: wc})
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := c.Acquire(ctx, "k", lock.WithRetry(lock.FixedDelay(100*ms)))
		if !errors.Is(err, lock.ErrNotAcquired) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want ErrNotAcquired and DeadlineExceeded", err)
		}
		if n := len(wc.acquireCalls()); n < 10 {
			t.Errorf("%d attempts in 1s at 50-100ms; a Waiter must not stop polling", n)
		}
		if w, o := wc.watches.Load(), wc.open.Load(); w != 1 || o != 0 {
			t.Errorf("%d watches opened, %d left open; want 1 opened and closed", w, o)
		}
	})
}

func TestAcquire_expiredHolderFoundByPolling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		a, b := openMemory(t, store), openMemory(t, store)
		start := time.Now()
		mustAcquire(t, a, "k", lock.WithTTL(time.Second)) // never released
		if _, err := b.Acquire(context.Background(), "k", lock.WithRetry(lock.FixedDelay(100*ms))); err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got < time.Second || got > time.Second+100*ms {
			t.Errorf("acquired after %v; want within one poll (100ms) of the expiry at 1s", got)
		}
	})
}

func TestAcquire_pollsAtStrategyPaceWithoutWaiter(t *testing.T) {
	tests := []struct {
		name    string
		s       lock.RetryStrategy
		nominal func(attempt int) time.Duration
	}{
		{"FixedDelay", lock.FixedDelay(100 * ms), func(int) time.Duration { return 100 * ms }},
		{"LinearBackoff", lock.LinearBackoff(100*ms, 250*ms), func(a int) time.Duration { return min(time.Duration(a)*100*ms, 250*ms) }},
		{"ExponentialBackoff", lock.ExponentialBackoff(100*ms, 500*ms), func(a int) time.Duration { return min(100*ms<<(a-1), 500*ms) }},
	}
	const heldFor = 5 // attempts
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sc := &scriptedConn{onAcquire: func(_ context.Context, n int, _ string) (driver.Lease, error) {
					if n <= heldFor {
						return driver.Lease{}, driver.ErrHeld
					}
					return driver.Lease{}, nil
				}}
				c := openScripted(t, sc, false)
				if _, err := c.Acquire(context.Background(), "k", lock.WithRetry(tt.s)); err != nil {
					t.Fatal(err)
				}
				calls := sc.acquireCalls()
				if len(calls) != heldFor+1 {
					t.Fatalf("%d attempts, want %d", len(calls), heldFor+1)
				}
				for i := 1; i < len(calls); i++ {
					checkJitter(t, i, calls[i].at.Sub(calls[i-1].at), tt.nominal(i))
				}
				if got, want := c.Stats(), (lock.Stats{Contended: heldFor, Acquired: 1}); got != want {
					t.Errorf("Stats = %+v, want %+v", got, want)
				}
			})
		})
	}
}

func TestAcquire_retriesBackendErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := &scriptedConn{onAcquire: func(_ context.Context, n int, _ string) (driver.Lease, error) {
			if n <= 2 {
				return driver.Lease{}, errBackendDown
			}
			return driver.Lease{}, nil
		}}
		c := openScripted(t, sc, false)
		l, err := c.Acquire(context.Background(), "k", lock.WithRetry(lock.FixedDelay(100*ms)))
		if err != nil {
			t.Fatalf("Acquire: %v; want success on the third attempt", err)
		}
		acq := sc.acquireCalls()
		if len(acq) != 3 {
			t.Fatalf("%d attempts, want 3", len(acq))
		}
		for i := 1; i < len(acq); i++ {
			checkJitter(t, i, acq[i].at.Sub(acq[i-1].at), 100*ms)
		}
		rel := sc.releaseCalls()
		if len(rel) != 2 || rel[0].value != acq[0].value || rel[1].value != acq[1].value {
			t.Errorf("releases = %+v; want cleanups of the two failed attempts' values", rel)
		}
		if err := l.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
		if rel := sc.releaseCalls(); len(rel) != 3 || rel[2].value != acq[2].value {
			t.Errorf("releases = %+v; the lock should hold the third attempt's value", rel)
		}
		if got, want := c.Stats(), (lock.Stats{Failed: 2, Acquired: 1, Released: 1}); got != want {
			t.Errorf("Stats = %+v, want %+v", got, want)
		}
	})
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

// acquireAndRelease acquires key on c in the background, waiting with
// opts, releases the lock, and sends Acquire's error.
func acquireAndRelease(c *lock.Client, key string, opts ...lock.Option) <-chan error {
	done := make(chan error, 1)
	go func() {
		l, err := c.Acquire(context.Background(), key, opts...)
		if err == nil {
			l.Release(context.Background())
		}
		done <- err
	}()
	return done
}

// TestAcquire_backendErrorAfterAWakeUpRetriesSoon: an attempt made at a
// release's announcement that the backend fails (its connection broke
// while the waiter slept, say) is retried after 10ms, then 20ms, ..., not
// after the strategy's delay: the release will not be announced again.
// Failures that follow no wake-up keep the strategy's delay.
func TestAcquire_backendErrorAfterAWakeUpRetriesSoon(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Attempts 1 and 2 (before and after subscribing) find the key
		// held, 3 fails with no wake-up before it, 4 to 6 fail after a
		// release's announcement, 7 succeeds.
		sc := &scriptedConn{onAcquire: func(_ context.Context, n int, _ string) (driver.Lease, error) {
			switch {
			case n <= 2:
				return driver.Lease{}, driver.ErrHeld
			case n <= 6:
				return driver.Lease{}, errBackendDown
			}
			return driver.Lease{}, nil
		}}
		ac := &announcingConn{scriptedConn: sc, released: make(chan struct{}, 1)}
		c := lock.OpenConnector(&scriptedConnector{conn: ac})
		c.SetLogger(quiet)
		defer c.Close()

		const poll = time.Minute
		done := acquireAndRelease(c, "k", lock.WithRetry(lock.FixedDelay(poll)))
		synctest.Wait() // attempts 1 and 2; asleep for up to a minute
		for len(sc.acquireCalls()) < 3 {
			time.Sleep(time.Second)
			synctest.Wait()
		}
		// Attempt 3, after the strategy's delay, failed: asleep again.
		if n := len(sc.acquireCalls()); n != 3 {
			t.Fatalf("%d attempts before the announcement, want 3", n)
		}
		ac.released <- struct{}{}
		if err := <-done; err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		acq := sc.acquireCalls()
		if len(acq) != 7 {
			t.Fatalf("%d attempts, want 7", len(acq))
		}
		checkJitter(t, 2, acq[2].at.Sub(acq[1].at), poll)
		for i, want := range []time.Duration{10 * ms, 20 * ms, 40 * ms} {
			if got := acq[i+4].at.Sub(acq[i+3].at); got != want {
				t.Errorf("attempt %d came %v after the failure before it, want %v", i+5, got, want)
			}
		}
	})
}

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

// TestAcquire_failedSubscriptionIsRetriedSoon: a waiter whose subscription
// to releases failed hears of no release, so it tries again after 10ms,
// 20ms, ... rather than at the strategy's pace; and backs off that way if
// subscribing keeps failing, rather than hammer the backend.
func TestAcquire_failedSubscriptionIsRetriedSoon(t *testing.T) {
	held := func(_ context.Context, n int, _ string) (driver.Lease, error) {
		return driver.Lease{}, driver.ErrHeld
	}
	const poll = time.Minute
	t.Run("fails twice", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sc := &scriptedConn{onAcquire: func(_ context.Context, n int, _ string) (driver.Lease, error) {
				if n <= 4 {
					return driver.Lease{}, driver.ErrHeld
				}
				return driver.Lease{}, nil
			}}
			uc := &unsubscribableConn{announcingConn: &announcingConn{scriptedConn: sc, released: make(chan struct{}, 1)}, fail: 2}
			c := lock.OpenConnector(&scriptedConnector{conn: uc})
			c.SetLogger(quiet)
			defer c.Close()
			done := acquireAndRelease(c, "k", lock.WithRetry(lock.FixedDelay(poll)))
			synctest.Wait()
			time.Sleep(time.Second)
			synctest.Wait()
			// Attempt 1, subscription failed; 10ms: attempt 2, failed again;
			// 20ms: attempt 3, subscribed; attempt 4 at once; asleep.
			acq := sc.acquireCalls()
			if len(acq) != 4 || uc.watches.Load() != 3 {
				t.Fatalf("%d attempts and %d subscriptions before the announcement, want 4 and 3", len(acq), uc.watches.Load())
			}
			for i, want := range []time.Duration{10 * ms, 20 * ms, 0} {
				if got := acq[i+1].at.Sub(acq[i].at); got != want {
					t.Errorf("attempt %d came %v after the one before it, want %v", i+2, got, want)
				}
			}
			uc.released <- struct{}{}
			if err := <-done; err != nil {
				t.Fatalf("Acquire: %v", err)
			}
			if n := len(sc.acquireCalls()); n != 5 {
				t.Errorf("%d attempts, want 5", n)
			}
		})
	})
	t.Run("always fails", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sc := &scriptedConn{onAcquire: held}
			uc := &unsubscribableConn{announcingConn: &announcingConn{scriptedConn: sc}, fail: -1}
			c := lock.OpenConnector(&scriptedConnector{conn: uc})
			c.SetLogger(quiet)
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := c.Acquire(ctx, "k", lock.WithRetry(lock.FixedDelay(poll))); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Acquire = %v, want the deadline's error", err)
			}
			// Attempts at 0, 10ms, 30ms, 70ms, ... 5.11s; the next would be at
			// 10.23s.
			if n := len(sc.acquireCalls()); n != 10 {
				t.Errorf("%d attempts in 10s, want 10: the retries of a failing subscription must back off", n)
			}
		})
	})
}

func TestAcquire_contextDeadlineEndsWait(t *testing.T) {
	tests := []struct {
		name     string
		open     func(t *testing.T) *lock.Client
		wantLast error // the last attempt's cause
		notLast  error
	}{
		{
			name: "key held",
			open: func(t *testing.T) *lock.Client {
				store := memory.New()
				mustAcquire(t, openMemory(t, store), "k", lock.WithTTL(time.Hour))
				return openMemory(t, store)
			},
			wantLast: lock.ErrNotAcquired,
			notLast:  errBackendDown,
		},
		{
			name: "backend down",
			open: func(t *testing.T) *lock.Client {
				return openScripted(t, &scriptedConn{onAcquire: func(context.Context, int, string) (driver.Lease, error) {
					return driver.Lease{}, errBackendDown
				}}, false)
			},
			wantLast: errBackendDown,
			notLast:  lock.ErrNotAcquired,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := tt.open(t)
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				start := time.Now()
				l, err := c.Acquire(ctx, "k", lock.WithRetry(lock.FixedDelay(300*ms)))
				if l != nil {
					t.Fatal("Acquire succeeded")
				}
				if got := time.Since(start); got != time.Second {
					t.Errorf("Acquire gave up after %v, want at the deadline (1s)", got)
				}
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("err = %v, want it to match context.DeadlineExceeded", err)
				}
				if !errors.Is(err, tt.wantLast) {
					t.Errorf("err = %v, want it to match the last cause %v", err, tt.wantLast)
				}
				if errors.Is(err, tt.notLast) {
					t.Errorf("err = %v matches %v", err, tt.notLast)
				}
				var e *lock.Error
				if !errors.As(err, &e) || e.Op != "acquire" || e.Key != "k" {
					t.Errorf("err = %#v, want a *lock.Error for acquire k", err)
				}
			})
		})
	}
}

func TestAcquire_cancelCauseStillMatchesContextError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		mustAcquire(t, openMemory(t, store), "k", lock.WithTTL(time.Hour))
		c := openMemory(t, store)
		errShutdown := errors.New("shutting down")
		ctx, cancel := context.WithTimeoutCause(context.Background(), time.Second, errShutdown)
		defer cancel()
		_, err := c.Acquire(ctx, "k", lock.WithRetry(lock.FixedDelay(300*ms)))
		for _, want := range []error{context.DeadlineExceeded, errShutdown, lock.ErrNotAcquired} {
			if !errors.Is(err, want) {
				t.Errorf("err = %v, want it to match %v", err, want)
			}
		}
	})
}

func TestAcquire_cancelledContextMakesNoAttempt(t *testing.T) {
	sc := &scriptedConn{}
	c := openScripted(t, sc, false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, acquire := range map[string]func(context.Context, string, ...lock.Option) (*lock.Lock, error){
		"Acquire": c.Acquire, "TryAcquire": c.TryAcquire,
	} {
		if _, err := acquire(ctx, "k"); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err = %v, want context.Canceled", name, err)
		}
	}
	if n := len(sc.acquireCalls()); n != 0 {
		t.Errorf("driver called %d times under a cancelled context, want 0", n)
	}
}

func TestAcquire_limitAttemptsReturnsLastCause(t *testing.T) {
	held := func() (driver.Lease, error) { return driver.Lease{}, driver.ErrHeld }
	down := func() (driver.Lease, error) { return driver.Lease{}, errBackendDown }
	tests := []struct {
		name     string
		script   []func() (driver.Lease, error)
		want     error
		unwanted error
	}{
		{"held, held, down", []func() (driver.Lease, error){held, held, down}, errBackendDown, lock.ErrNotAcquired},
		{"down, down, held", []func() (driver.Lease, error){down, down, held}, lock.ErrNotAcquired, errBackendDown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sc := &scriptedConn{onAcquire: func(_ context.Context, n int, _ string) (driver.Lease, error) {
					return tt.script[min(n, len(tt.script))-1]()
				}}
				c := openScripted(t, sc, false)
				start := time.Now()
				_, err := c.Acquire(context.Background(), "k",
					lock.WithRetry(lock.LimitAttempts(lock.FixedDelay(time.Minute), len(tt.script))))
				if !errors.Is(err, tt.want) || errors.Is(err, tt.unwanted) {
					t.Errorf("err = %v, want the last cause %v only", err, tt.want)
				}
				if n := len(sc.acquireCalls()); n != len(tt.script) {
					t.Errorf("%d attempts, want %d", n, len(tt.script))
				}
				if got := time.Since(start); got > 2*time.Minute {
					t.Errorf("Acquire took %v; it should stop right after the last attempt", got)
				}
			})
		})
	}
}

// --- Extend ----------------------------------------------------------------

func TestExtend_movesValidUntil(t *testing.T) {
	tests := []struct {
		name string
		ttl  time.Duration
	}{
		{"longer", 2 * time.Second},
		{"same", time.Second},
		{"shorter moves it earlier", 100 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sc := &scriptedConn{onExtend: func(context.Context, int) error {
					time.Sleep(50 * ms)
					return nil
				}}
				c := openScripted(t, sc, true)
				l := mustAcquire(t, c, "k", lock.WithTTL(time.Second), lock.WithDriftFactor(0.25))
				time.Sleep(200 * ms)
				start := time.Now()
				if err := l.Extend(context.Background(), tt.ttl); err != nil {
					t.Fatalf("Extend: %v", err)
				}
				want := start.Add(tt.ttl - driftOf(tt.ttl, 0.25))
				if got := l.ValidUntil(); !got.Equal(want) {
					t.Errorf("ValidUntil = start'+%v, want start'+%v (from before the extension, with the lock's drift factor)",
						got.Sub(start), want.Sub(start))
				}
				if e := sc.extendCalls(); len(e) != 1 || e[0].ttl != tt.ttl {
					t.Errorf("extend calls = %+v, want one with ttl %v", e, tt.ttl)
				}
				if got, want := c.Stats(), (lock.Stats{Acquired: 1, Extended: 1}); got != want {
					t.Errorf("Stats = %+v, want %+v", got, want)
				}
			})
		})
	}
}

// checkLost checks that l is known lost: Extend and Release fail with
// ErrNotHeld without calling the driver.
func checkLost(t *testing.T, l *lock.Lock, sc *scriptedConn) {
	t.Helper()
	ext, rel := len(sc.extendCalls()), len(sc.releaseCalls())
	if err := l.Extend(context.Background(), time.Second); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Extend of a lost lock: err = %v, want ErrNotHeld", err)
	}
	if err := l.Release(context.Background()); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Release of a lost lock: err = %v, want ErrNotHeld", err)
	}
	if n := len(sc.extendCalls()); n != ext {
		t.Errorf("Extend of a lost lock called the driver")
	}
	if n := len(sc.releaseCalls()); n != rel {
		t.Errorf("Release of a lost lock called the driver")
	}
}

func TestExtend_answerAfterValidityLosesAndReleases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := &scriptedConn{onExtend: func(context.Context, int) error {
			time.Sleep(600 * ms) // ignores ctx, and succeeds, too late
			return nil
		}}
		c := openScripted(t, sc, true)
		l := mustAcquire(t, c, "k", lock.WithTTL(time.Second))
		deadline := l.ValidUntil()
		time.Sleep(500 * ms)
		err := l.Extend(context.Background(), time.Second)
		if !errors.Is(err, lock.ErrNotHeld) {
			t.Fatalf("Extend: err = %v, want ErrNotHeld", err)
		}
		if e := sc.extendCalls(); len(e) != 1 || !e[0].hasDeadline {
			t.Errorf("extend calls = %+v; want one, bounded by the validity", e)
		}
		if l.ValidUntil().After(deadline) {
			t.Errorf("ValidUntil moved to %v after a late extension", l.ValidUntil().Sub(deadline))
		}
		rel := sc.releaseCalls()
		if len(rel) != 1 || rel[0].value != sc.acquireCalls()[0].value || rel[0].ctxErr != nil {
			t.Errorf("releases = %+v; want one release of the lock's value, under a live context", rel)
		}
		if got, want := c.Stats(), (lock.Stats{Acquired: 1, Lost: 1}); got != want {
			t.Errorf("Stats = %+v, want %+v", got, want)
		}
		checkLost(t, l, sc)
	})
}

func TestExtend_errorAfterValidityLosesAndReleases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := &scriptedConn{onExtend: func(ctx context.Context, _ int) error {
			<-ctx.Done() // a driver that honours ctx: the reply is lost at the deadline
			return ctx.Err()
		}}
		c := openScripted(t, sc, true)
		l := mustAcquire(t, c, "k", lock.WithTTL(time.Second))
		time.Sleep(500 * ms)
		if err := l.Extend(context.Background(), time.Second); !errors.Is(err, lock.ErrNotHeld) {
			t.Fatalf("Extend: err = %v, want ErrNotHeld", err)
		}
		if rel := sc.releaseCalls(); len(rel) != 1 || rel[0].value != sc.acquireCalls()[0].value {
			t.Errorf("releases = %+v; want the core to release the key the extension may have prolonged", rel)
		}
		if got, want := c.Stats(), (lock.Stats{Acquired: 1, Lost: 1}); got != want {
			t.Errorf("Stats = %+v, want %+v", got, want)
		}
	})
}

func TestExtend_afterValidityDoesNotCallDriver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := &scriptedConn{}
		c := openScripted(t, sc, true)
		l := mustAcquire(t, c, "k", lock.WithTTL(time.Second))
		until := l.ValidUntil()
		time.Sleep(time.Second)
		if err := l.Extend(context.Background(), time.Second); !errors.Is(err, lock.ErrNotHeld) {
			t.Errorf("Extend after ValidUntil: err = %v, want ErrNotHeld", err)
		}
		if n := len(sc.extendCalls()); n != 0 {
			t.Errorf("driver asked to extend an expired lock (%d calls)", n)
		}
		if !l.ValidUntil().Equal(until) {
			t.Errorf("ValidUntil changed by %v", l.ValidUntil().Sub(until))
		}
		if got, want := c.Stats(), (lock.Stats{Acquired: 1, Lost: 1}); got != want {
			t.Errorf("Stats = %+v, want %+v", got, want)
		}
		if err := l.Extend(context.Background(), time.Second); !errors.Is(err, lock.ErrNotHeld) || len(sc.extendCalls()) != 0 {
			t.Errorf("second Extend after ValidUntil: err = %v, %d driver calls; want ErrNotHeld and none", err, len(sc.extendCalls()))
		}
		// The backend may still hold the lease (the drift allowance):
		// Release still gives it back.
		if err := l.Release(context.Background()); err != nil || len(sc.releaseCalls()) != 1 {
			t.Errorf("Release after ValidUntil: err = %v, %d driver calls; want nil and one", err, len(sc.releaseCalls()))
		}
		if got, want := c.Stats(), (lock.Stats{Acquired: 1, Released: 1, Lost: 1}); got != want {
			t.Errorf("Stats = %+v, want %+v (a loss is counted once)", got, want)
		}
	})
}

func TestExtend_notHeld(t *testing.T) {
	for _, notHeld := range []error{driver.ErrNotHeld, fmt.Errorf("script: %w", driver.ErrNotHeld)} {
		t.Run(notHeld.Error(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sc := &scriptedConn{onExtend: func(context.Context, int) error { return notHeld }}
				c := openScripted(t, sc, true)
				l := mustAcquire(t, c, "k", lock.WithTTL(time.Second))
				time.Sleep(100 * ms)
				called := time.Now()
				err := l.Extend(context.Background(), time.Second)
				if !errors.Is(err, lock.ErrNotHeld) {
					t.Errorf("Extend: err = %v, want ErrNotHeld", err)
				}
				if notHeld != driver.ErrNotHeld && !errors.Is(err, notHeld) {
					t.Errorf("Extend: err = %v; the driver's wrapped error is not reachable", err)
				}
				if l.ValidUntil().After(called) {
					t.Errorf("ValidUntil is %v after the refused extension, want no later than it", l.ValidUntil().Sub(called))
				}
				if got, want := c.Stats(), (lock.Stats{Acquired: 1, Lost: 1}); got != want {
					t.Errorf("Stats = %+v, want %+v", got, want)
				}
				checkLost(t, l, sc)
			})
		})
	}
}

func TestExtend_backendErrorKeepsLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := &scriptedConn{onExtend: func(_ context.Context, n int) error {
			if n == 1 {
				return errBackendDown
			}
			return nil
		}}
		c := openScripted(t, sc, true)
		l := mustAcquire(t, c, "k", lock.WithTTL(time.Second))
		until := l.ValidUntil()
		time.Sleep(100 * ms)
		err := l.Extend(context.Background(), time.Second)
		if !errors.Is(err, errBackendDown) || errors.Is(err, lock.ErrNotHeld) {
			t.Errorf("Extend: err = %v, want the backend's error and not ErrNotHeld", err)
		}
		if !l.ValidUntil().Equal(until) {
			t.Errorf("ValidUntil moved by %v after a failed extension", l.ValidUntil().Sub(until))
		}
		time.Sleep(100 * ms)
		start := time.Now()
		if err := l.Extend(context.Background(), time.Second); err != nil {
			t.Fatalf("second Extend: %v", err)
		}
		if want := start.Add(time.Second - driftOf(time.Second, lock.DefaultDriftFactor)); !l.ValidUntil().Equal(want) {
			t.Errorf("ValidUntil = %v after the retry, want %v", l.ValidUntil().Sub(start), want.Sub(start))
		}
		if got, want := c.Stats(), (lock.Stats{Acquired: 1, Extended: 1}); got != want {
			t.Errorf("Stats = %+v, want %+v", got, want)
		}
		if err := l.Release(context.Background()); err != nil {
			t.Errorf("Release: %v", err)
		}
	})
}

func TestExtend_unsupportedWithoutExtender(t *testing.T) {
	sc := &scriptedConn{}
	c := openScripted(t, sc, false)
	l := mustAcquire(t, c, "k")
	err := l.Extend(context.Background(), time.Second)
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Extend: err = %v, want errors.ErrUnsupported", err)
	}
	if errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Extend: err = %v matches ErrNotHeld; the lock is still held", err)
	}
	if err := l.Release(context.Background()); err != nil {
		t.Errorf("Release after an unsupported Extend: %v", err)
	}
}

func TestExtend_invalidTTL(t *testing.T) {
	sc := &scriptedConn{}
	c := openScripted(t, sc, true)
	l := mustAcquire(t, c, "k")
	for _, ttl := range []time.Duration{0, -time.Second, lock.MinTTL - 1, lock.MaxTTL + 1} {
		if err := l.Extend(context.Background(), ttl); !errors.Is(err, lock.ErrInvalidTTL) {
			t.Errorf("Extend(%v): err = %v, want ErrInvalidTTL", ttl, err)
		}
	}
	if n := len(sc.extendCalls()); n != 0 {
		t.Errorf("driver called %d times with invalid TTLs", n)
	}
}

// --- Release ---------------------------------------------------------------

func TestRelease_endsValidityAtTheCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := &scriptedConn{onRelease: func(context.Context, int) error {
			time.Sleep(100 * ms)
			return nil
		}}
		c := openScripted(t, sc, false)
		l := mustAcquire(t, c, "k", lock.WithTTL(time.Minute))
		time.Sleep(time.Second)
		called := time.Now()
		if err := l.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
		if l.ValidUntil().After(called) {
			t.Errorf("ValidUntil is %v after the Release call, want no later than it", l.ValidUntil().Sub(called))
		}
		if got, want := c.Stats(), (lock.Stats{Acquired: 1, Released: 1}); got != want {
			t.Errorf("Stats = %+v, want %+v", got, want)
		}
		if err := l.Release(context.Background()); !errors.Is(err, lock.ErrNotHeld) {
			t.Errorf("second Release: err = %v, want ErrNotHeld", err)
		}
		if n := len(sc.releaseCalls()); n != 1 {
			t.Errorf("driver Release called %d times, want 1", n)
		}
		if got := c.Stats(); got.Lost != 0 {
			t.Errorf("a released lock counted as lost: %+v", got)
		}
	})
}

func TestRelease_backendErrorThenRetry(t *testing.T) {
	sc := &scriptedConn{onRelease: func(_ context.Context, n int) error {
		if n == 1 {
			return errBackendDown
		}
		return nil
	}}
	c := openScripted(t, sc, false)
	l := mustAcquire(t, c, "k", lock.WithTTL(time.Minute))
	until := l.ValidUntil()
	err := l.Release(context.Background())
	if !errors.Is(err, errBackendDown) || errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Release: err = %v, want the backend's error and not ErrNotHeld", err)
	}
	if !l.ValidUntil().Equal(until) {
		t.Error("a failed Release changed ValidUntil")
	}
	if err := l.Release(context.Background()); err != nil {
		t.Errorf("retried Release: %v", err)
	}
	if got, want := c.Stats(), (lock.Stats{Acquired: 1, Released: 1}); got != want {
		t.Errorf("Stats = %+v, want %+v", got, want)
	}
}

func TestRelease_notOwner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		a, b := openMemory(t, store), openMemory(t, store)
		la := mustAcquire(t, a, "k", lock.WithTTL(time.Second))
		time.Sleep(2 * time.Second)
		lb := mustAcquire(t, b, "k", lock.WithTTL(time.Minute))
		err := la.Release(context.Background())
		if !errors.Is(err, lock.ErrNotHeld) {
			t.Errorf("Release by the expired holder: err = %v, want ErrNotHeld", err)
		}
		if _, err := b.TryAcquire(context.Background(), "k"); !errors.Is(err, lock.ErrNotAcquired) {
			t.Errorf("the new holder's lock was released by the old one: TryAcquire err = %v", err)
		}
		if got, want := a.Stats(), (lock.Stats{Acquired: 1, Lost: 1}); got != want {
			t.Errorf("old holder's Stats = %+v, want %+v", got, want)
		}
		if err := lb.Release(context.Background()); err != nil {
			t.Error(err)
		}
	})
}

// --- Stats -----------------------------------------------------------------

func TestStats_countEachPath(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		sc   *scriptedConn
		run  func(t *testing.T, c *lock.Client)
		want lock.Stats
	}{
		{"fresh client", &scriptedConn{}, func(*testing.T, *lock.Client) {}, lock.Stats{}},
		{"acquired", &scriptedConn{}, func(t *testing.T, c *lock.Client) { mustAcquire(t, c, "k") },
			lock.Stats{Acquired: 1}},
		{"contended", &scriptedConn{onAcquire: heldAlways}, func(t *testing.T, c *lock.Client) {
			c.TryAcquire(ctx, "k")
			c.TryAcquire(ctx, "k")
		}, lock.Stats{Contended: 2}},
		{"failed", &scriptedConn{onAcquire: func(context.Context, int, string) (driver.Lease, error) {
			return driver.Lease{}, errBackendDown
		}}, func(t *testing.T, c *lock.Client) { c.TryAcquire(ctx, "k") }, lock.Stats{Failed: 1}},
		{"invalid options count nothing", &scriptedConn{}, func(t *testing.T, c *lock.Client) {
			c.TryAcquire(ctx, "")
			c.TryAcquire(ctx, "k", lock.WithTTL(0))
		}, lock.Stats{}},
		{"released", &scriptedConn{}, func(t *testing.T, c *lock.Client) {
			mustAcquire(t, c, "k").Release(ctx)
		}, lock.Stats{Acquired: 1, Released: 1}},
		{"failed release", &scriptedConn{onRelease: func(context.Context, int) error { return errBackendDown }},
			func(t *testing.T, c *lock.Client) { mustAcquire(t, c, "k").Release(ctx) },
			lock.Stats{Acquired: 1}},
		{"extended", &scriptedConn{}, func(t *testing.T, c *lock.Client) {
			l := mustAcquire(t, c, "k")
			l.Extend(ctx, time.Second)
			l.Extend(ctx, time.Second)
		}, lock.Stats{Acquired: 1, Extended: 2}},
		{"lost on extend", &scriptedConn{onExtend: func(context.Context, int) error { return driver.ErrNotHeld }},
			func(t *testing.T, c *lock.Client) {
				l := mustAcquire(t, c, "k")
				l.Extend(ctx, time.Second)
				l.Extend(ctx, time.Second)
				l.Release(ctx)
			}, lock.Stats{Acquired: 1, Lost: 1}},
		{"lost on release", &scriptedConn{onRelease: func(context.Context, int) error { return driver.ErrNotHeld }},
			func(t *testing.T, c *lock.Client) {
				l := mustAcquire(t, c, "k")
				l.Release(ctx)
				l.Release(ctx)
			}, lock.Stats{Acquired: 1, Lost: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := openScripted(t, tt.sc, true)
			tt.run(t, c)
			if got := c.Stats(); got != tt.want {
				t.Errorf("Stats = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// --- Error -----------------------------------------------------------------

func TestError_messageFormat(t *testing.T) {
	c := openScripted(t, &scriptedConn{onAcquire: heldAlways}, false)
	_, err := c.TryAcquire(context.Background(), "invoice:42")
	if got, want := err.Error(), `lock: acquire "invoice:42": held by another holder`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	var e *lock.Error
	if !errors.As(err, &e) {
		t.Fatalf("errors.As(%v, *lock.Error) = false", err)
	}
	if e.Op != "acquire" || e.Key != "invoice:42" || !errors.Is(e.Err, lock.ErrNotAcquired) {
		t.Errorf("Error = %+v, want Op acquire, Key invoice:42, Err ErrNotAcquired", e)
	}

	tests := []struct {
		e    *lock.Error
		want string
	}{
		{&lock.Error{Op: "release", Key: "k", Err: lock.ErrNotHeld}, `lock: release "k": lock is not held`},
		{&lock.Error{Op: "ping", Err: errBackendDown}, `lock: ping: backend down`},
		{&lock.Error{Op: "extend", Key: "a\"b\n", Err: lock.ErrNotHeld}, `lock: extend "a\"b\n": lock is not held`},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestError_longKeyShortened(t *testing.T) {
	huge := strings.Repeat("k", 10<<20)
	c := openScripted(t, &scriptedConn{}, false)
	_, err := c.TryAcquire(context.Background(), huge)
	var e *lock.Error
	if !errors.As(err, &e) || !errors.Is(err, lock.ErrInvalidKey) {
		t.Fatalf("TryAcquire with a 10MB key: err = %v, want a *lock.Error matching ErrInvalidKey", err)
	}
	msg := err.Error()
	if overhead := len(msg) - len(e.Err.Error()); overhead >= 200 {
		t.Errorf("message is %d bytes besides its cause; the key should be shortened", overhead)
	}
	if !strings.HasPrefix(msg, `lock: acquire "kkkk`) {
		t.Errorf("message %.80q does not start with the key's beginning", msg)
	}

	// A cut through a multi-byte rune must not leave invalid UTF-8.
	for _, r := range []string{"é", "€", "😀"} {
		msg := (&lock.Error{Op: "acquire", Key: strings.Repeat(r, 1<<16), Err: lock.ErrNotAcquired}).Error()
		if len(msg) >= 200+len(lock.ErrNotAcquired.Error()) {
			t.Errorf("%s key: message is %d bytes", r, len(msg))
		}
		if !utf8.ValidString(msg) || strings.Contains(msg, `\x`) {
			t.Errorf("%s key: message %q holds a cut rune", r, msg)
		}
	}
}
