package pipenode

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"
)

// A client that takes long to open holds a request no longer than its
// context; the open goes on, and a later request uses the client.
func TestNode_openBoundedByContext(t *testing.T) {
	c := &fakeClient{reply: "PONG"}
	opened := make(chan struct{})
	n := Lazy(func() (Client, error) { <-opened; return c, nil }, "fake")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := n.Do(ctx, []any{"PING"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Do while the client opens = %v, want the context's deadline", err)
	}
	close(opened)
	if v, err := n.Do(context.Background(), []any{"PING"}); err != nil || v != "PONG" {
		t.Fatalf("Do once opened = %v, %v", v, err)
	}
	n.Close()
	if c.closed.Load() != 1 {
		t.Fatalf("Close closed the client %d times, want once", c.closed.Load())
	}
}

// An open that ends after the node closed closes its client.
func TestNode_closedWhileOpening(t *testing.T) {
	c := &fakeClient{}
	opened := make(chan struct{})
	n := Lazy(func() (Client, error) { <-opened; return c, nil }, "fake")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	n.Do(ctx, []any{"PING"}) //nolint:errcheck // only starts the open
	n.Close()
	close(opened)
	for deadline := time.Now().Add(5 * time.Second); c.closed.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the client opened after Close was never closed")
		}
	}
}

// Close leaves the client open for the request that uses it, and closes
// it when that request ends.
func TestNode_closeWaitsForRequests(t *testing.T) {
	c := &fakeClient{unblock: make(chan struct{})}
	n := Lazy(func() (Client, error) { return c, nil }, "fake")
	done := make(chan error)
	go func() {
		_, err := n.Do(context.Background(), []any{"PING"})
		done <- err
	}()
	for n.users0() {
		time.Sleep(time.Millisecond)
	}
	n.Close()
	if c.closed.Load() != 0 {
		t.Fatal("Close closed the client under a request")
	}
	close(c.unblock)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c.closed.Load() != 1 {
		t.Fatalf("the client was closed %d times after its last request, want once", c.closed.Load())
	}
	if _, err := n.Do(context.Background(), []any{"PING"}); !errors.Is(err, errClosed) {
		t.Fatalf("Do after Close = %v, want errClosed", err)
	}
}

// A dedicated connection that the open client could not dial (its server
// went down) fails Subscribe, rather than making a subscriber whose Receive
// fails at once: redlock would reconnect at once, over and over, waking
// every waiter each time, and count the node as reachable.
func TestNode_subscribeFailsWhenTheDialFails(t *testing.T) {
	refused := errors.New("dial tcp: connection refused")
	n := New(&fakeClient{listenErr: refused}, "fake")
	sub, err := n.Subscribe(context.Background())
	if !errors.Is(err, refused) {
		t.Fatalf("Subscribe with the dial failing = %v, %v; want the dial's error", sub, err)
	}
}

// users0 reports whether no request uses the client yet.
func (n *Node) users0() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.users == 0
}

func TestCommand_keysRouteTheCommand(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []any
		want Command
	}{
		{"SET", []any{"SET", "k", "v", "PX", int64(100), "NX"}, Command{Head: []string{"SET"}, Keys: []string{"k"}, Tail: []string{"v", "PX", "100", "NX"}}},
		{"EVALSHA", []any{"EVALSHA", "sha", int64(2), "k1", "k2", "a"}, Command{Head: []string{"EVALSHA", "sha", "2"}, Keys: []string{"k1", "k2"}, Tail: []string{"a"}}},
		{"EVALwithoutKeys", []any{"EVAL", "src", int64(0)}, Command{Head: []string{"EVAL", "src", "0"}, Keys: []string{}, Tail: []string{}}},
		{"PUBLISH", []any{"PUBLISH", "ch", "v"}, Command{Head: []string{"PUBLISH", "ch", "v"}}},
		{"badNumkeys", []any{"EVAL", "src", int64(3), "k"}, Command{Head: []string{"EVAL", "src", "3", "k"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := command(tc.args)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("command(%v) = %#v, %v; want %#v", tc.args, got, err, tc.want)
			}
		})
	}
	if _, err := command([]any{"SET", 1.5}); err == nil {
		t.Error("a float64 argument was accepted")
	}
}

// Lua booleans reach RESP3 clients as booleans; redlock expects RESP2's
// 1 and nil.
func TestResp2_booleans(t *testing.T) {
	got := resp2([]any{true, false, "v", int64(7)})
	if want := []any{int64(1), nil, "v", int64(7)}; !reflect.DeepEqual(got, want) {
		t.Fatalf("resp2 = %#v, want %#v", got, want)
	}
}
