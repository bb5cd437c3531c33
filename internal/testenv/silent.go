package testenv

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock"
)

// SilentServer listens on a port of 127.0.0.1, accepts connections and
// never reads or answers, until the test ends. It returns its address: a
// server that is up but hung, as a driver's request timeout must bound.
func SilentServer(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// AcquireOrGiveUp calls c.Acquire on key "k" with no deadline, releasing
// what it gets, and closes c if it has not returned after d, failing the
// test. It returns Acquire's error.
func AcquireOrGiveUp(t testing.TB, c *lock.Client, d time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		l, err := c.Acquire(context.Background(), "k")
		if err == nil {
			l.Release(context.Background())
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Errorf("Acquire with no deadline had not returned after %v: closing the client", d)
		c.Close()
		return <-done
	}
}
