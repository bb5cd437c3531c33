package mysql_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	mysqldriver "github.com/distlock/lock/drivers/mysql"
	"github.com/distlock/lock/drivertest"
	"github.com/go-sql-driver/mysql"
)

// writes counts what the connections of the network "counting" write,
// each write one packet sent, and the statements they send.
var writes atomic.Int64

type countingConn struct{ net.Conn }

func (c countingConn) Write(b []byte) (int, error) {
	writes.Add(1)
	return c.Conn.Write(b)
}

func init() {
	mysql.RegisterDialContext("counting", func(ctx context.Context, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		return countingConn{c}, nil
	})
}

// measure returns how many writes op made.
func measure(op func() error) (int64, error) {
	before := writes.Load()
	err := op()
	return writes.Load() - before, err
}

// TestRoundTrips_oneEach shows, through a dial registered with
// RegisterDialContext, that acquire (granted or refused), extend, release,
// transfer and inspect each write one packet (one statement, one round
// trip) once the statements are prepared on the connection.
func TestRoundTrips_oneEach(t *testing.T) {
	cfg := config(t, server(t))
	dsn := withTable(t, "distlock@counting("+cfg.Addr+")/"+cfg.DBName)
	c := open(t, dsn)
	other := open(t, dsn)
	ctx := drivertest.Context(t, 30*time.Second)
	const key = "roundtrips"

	var l *lock.Lock
	steps := []struct {
		name string
		op   func() error
	}{
		{"acquire", func() (err error) { l, err = c.TryAcquire(ctx, key); return err }},
		{"acquireHeld", func() error {
			if _, err := other.TryAcquire(ctx, key); !errors.Is(err, lock.ErrNotAcquired) {
				return errors.New("TryAcquire of a held key did not fail with ErrNotAcquired")
			}
			return nil
		}},
		{"extend", func() error { return l.Extend(ctx, time.Minute) }},
		{"release", func() error { return l.Release(ctx) }},
	}
	// The first round connects and prepares the statements: the counter
	// must see that, or it proves nothing.
	n, err := measure(func() error {
		for _, s := range steps {
			if err := s.op(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Fatalf("the first round wrote %d packets, connecting and preparing included; want at least 10 (is the counting dial used?)", n)
	}
	for range 3 {
		for _, s := range steps {
			n, err := measure(s.op)
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			if n != 1 {
				t.Errorf("%s wrote %d packets, want 1", s.name, n)
			}
		}
	}

	dc := drivertest.Connect(t, mysqldriver.Driver{}, dsn)
	defer dc.Close()
	if _, err := dc.Acquire(ctx, key, "v0", time.Minute); err != nil {
		t.Fatal(err)
	}
	tr, in := dc.(driver.Transferer), dc.(driver.Inspector)
	for i, v := range []string{"v1", "v2", "v3"} {
		prev := []string{"v0", "v1", "v2"}[i]
		n, err := measure(func() error { _, err := tr.Transfer(ctx, key, prev, v, time.Minute); return err })
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && n != 1 { // the first prepares the statement on the connection
			t.Errorf("transfer wrote %d packets, want 1", n)
		}
		n, err = measure(func() error { _, _, err := in.Inspect(ctx, key); return err })
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && n != 1 {
			t.Errorf("inspect wrote %d packets, want 1", n)
		}
	}
	if err := dc.Release(ctx, key, "v3"); err != nil {
		t.Error(err)
	}
}
