package lock_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/memory"
)

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
