package locktest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/locktest"
)

// TestConnect_keepsTheCapabilities: a Backend's connection has the
// optional interfaces that change the core's path (extending, watching,
// transferring) exactly when the wrapped connection has them. A wrapped
// LeaseConn makes an Extender.
func TestConnect_keepsTheCapabilities(t *testing.T) {
	p := &plainConn{}
	conns := []struct {
		c                       driver.Conn
		extend, watch, transfer bool
	}{
		{p, false, false, false},
		{struct {
			*plainConn
			extender
		}{p, extender{}}, true, false, false},
		{struct {
			*plainConn
			leaser
		}{p, leaser{}}, true, false, false},
		{struct {
			*plainConn
			waiter
		}{p, waiter{}}, false, true, false},
		{struct {
			*plainConn
			transferer
		}{p, transferer{}}, false, false, true},
		{struct {
			*plainConn
			extender
			waiter
		}{p, extender{}, waiter{}}, true, true, false},
		{struct {
			*plainConn
			extender
			transferer
		}{p, extender{}, transferer{}}, true, false, true},
		{struct {
			*plainConn
			waiter
			transferer
		}{p, waiter{}, transferer{}}, false, true, true},
		{struct {
			*plainConn
			extender
			waiter
			transferer
		}{p, extender{}, waiter{}, transferer{}}, true, true, true},
	}
	for _, tc := range conns {
		t.Run(fmt.Sprintf("extend=%v,watch=%v,transfer=%v", tc.extend, tc.watch, tc.transfer), func(t *testing.T) {
			cn, err := locktest.Wrap(connectorOf{tc.c}).Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			_, ext := cn.(driver.Extender)
			_, watch := cn.(driver.Waiter)
			_, transfer := cn.(driver.Transferer)
			_, ping := cn.(driver.Pinger)
			_, inspect := cn.(driver.Inspector)
			if ext != tc.extend || watch != tc.watch || transfer != tc.transfer || !ping || !inspect {
				t.Errorf("Extender %v, Waiter %v, Transferer %v, Pinger %v, Inspector %v; want %v, %v, %v, true, true",
					ext, watch, transfer, ping, inspect, tc.extend, tc.watch, tc.transfer)
			}
		})
	}
}

// TestConnect_noExtender: on a driver that cannot extend, Extend is
// unsupported, as without locktest, and Inspect too.
func TestConnect_noExtender(t *testing.T) {
	c := open(t, locktest.Wrap(connectorOf{&plainConn{}}))
	ctx := context.Background()
	l, err := c.Acquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Extend(ctx, lock.DefaultTTL); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Extend = %v, want ErrUnsupported", err)
	}
	if _, _, err := c.Inspect(ctx, "k"); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Inspect = %v, want ErrUnsupported", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Errorf("Release = %v", err)
	}
}

// TestConnect_wrappedLoss: a loss the wrapped driver reports (its own
// Lease.Lost) reaches the lock, and Holds says so.
func TestConnect_wrappedLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &plainConn{lost: make(chan struct{})}
		b := locktest.Wrap(connectorOf{p})
		c := open(t, b)
		l, err := c.Acquire(context.Background(), "k")
		if err != nil {
			t.Fatal(err)
		}
		close(p.lost)
		synctest.Wait()
		if !errors.Is(l.Err(), lock.ErrLost) {
			t.Errorf("Err = %v, want ErrLost", l.Err())
		}
		if b.Holds("k", 0) {
			t.Error("Holds = true after the driver reported the loss")
		}
	})
}

// TestConnect_inspectReportsTokens: Inspect reports the holder's token as
// handed out.
func TestConnect_inspectReportsTokens(t *testing.T) {
	b := locktest.New()
	c := open(t, b)
	ctx := context.Background()
	l, err := c.Acquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	h, held, err := c.Inspect(ctx, "k")
	tok, _ := l.Token()
	if err != nil || !held || h.Token != tok {
		t.Errorf("Inspect = %+v, %v, %v; want held with token %v", h, held, err, tok)
	}
}
