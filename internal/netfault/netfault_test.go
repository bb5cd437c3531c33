package netfault

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// echo serves an echo server on loopback for the test, and returns its
// address.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

// roundTrip writes a line on c and reads it back.
func roundTrip(c net.Conn) error {
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return err
	}
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err := bufio.NewReader(c).ReadString('\n')
	return err
}

func TestReset_closesEveryConnection(t *testing.T) {
	addr := echo(t)
	var d Dialer
	var conns []net.Conn
	for range 3 {
		c, err := d.Dial(context.Background(), "tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := roundTrip(c); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	if n := d.Reset(); n != 3 || d.Open() != 0 {
		t.Fatalf("Reset closed %d, %d still open; want 3 and 0", n, d.Open())
	}
	for i, c := range conns {
		if err := roundTrip(c); !errors.Is(err, net.ErrClosed) {
			t.Errorf("connection %d after Reset: %v, want net.ErrClosed", i, err)
		}
	}
	c, err := d.Dial(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := roundTrip(c); err != nil || d.Open() != 1 {
		t.Errorf("a connection dialed after Reset: %v, %d open", err, d.Open())
	}
}

func TestSlow_delaysReadsAndWrites(t *testing.T) {
	addr := echo(t)
	var d Dialer
	c, err := d.Dial(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d.Slow(150 * time.Millisecond)
	start := time.Now()
	if err := roundTrip(c); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("a round trip on a slowed connection took %v, under the 150ms delay of its write and of its read", took)
	}
	d.Slow(0)
	start = time.Now()
	if err := roundTrip(c); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= 150*time.Millisecond {
		t.Errorf("a round trip after Slow(0) took %v", took)
	}
	c.Close()
	if d.Open() != 0 {
		t.Errorf("%d open after Close", d.Open())
	}
}
