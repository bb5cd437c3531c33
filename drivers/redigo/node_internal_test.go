package redigo

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/distlock/lock/drivers/redlock"
	"github.com/distlock/lock/internal/redistest"
)

// testNode returns a node over the first test server, closed when the
// test ends.
func testNode(t *testing.T) *node {
	t.Helper()
	addrs := redistest.Servers(t)
	e, err := parseURL(0, "redis://"+addrs[0])
	if err != nil {
		t.Fatal(err)
	}
	n := &node{pool: e.pool(), name: e.addr, dial: e.dialSubscriber, own: true}
	t.Cleanup(func() { n.Close() })
	return n
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestNode_replies(t *testing.T) {
	n := testNode(t)
	ctx := ctxFor(t, 5*time.Second)
	key := "redigo-test:" + t.Name()
	n.Do(ctx, []any{"DEL", key, key + ":n"})
	for _, tc := range []struct {
		args []any
		want any
	}{
		{[]any{"PING"}, "PONG"},
		{[]any{"SET", key, "v", "PX", int64(60000), "NX"}, "OK"},
		{[]any{"SET", key, "v", "PX", int64(60000), "NX"}, nil},
		{[]any{"GET", key}, "v"},
		{[]any{"GET", key + ":none"}, nil},
		{[]any{"INCR", key + ":n"}, int64(1)},
		{[]any{"EVAL", "return {ARGV[1], 7, redis.status_reply('FINE')}", int64(0), "x"}, []any{"x", int64(7), "FINE"}},
		{[]any{"DEL", key, key + ":n"}, int64(2)},
	} {
		before := slices.Clone(tc.args)
		got, err := n.Do(ctx, tc.args)
		if err != nil {
			t.Errorf("Do(%v) = %v", tc.args, err)
			continue
		}
		if !equal(got, tc.want) {
			t.Errorf("Do(%v) = %#v, want %#v", tc.args, got, tc.want)
		}
		if !slices.Equal(before, tc.args) {
			t.Errorf("Do changed its arguments: %v, then %v", before, tc.args)
		}
	}
}

func equal(a, b any) bool {
	as, ok := a.([]any)
	if !ok {
		return a == b
	}
	bs, ok := b.([]any)
	return ok && slices.EqualFunc(as, bs, equal)
}

// A server's error reply is an error whose message is the server's: that
// is how redlock tells a NOSCRIPT and falls back to EVAL.
func TestNode_errorReply(t *testing.T) {
	n := testNode(t)
	ctx := ctxFor(t, 5*time.Second)
	_, err := n.Do(ctx, []any{"EVALSHA", strings.Repeat("0", 40), int64(0)})
	if err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT") {
		t.Errorf("EVALSHA of an unknown script = %v, want an error starting with NOSCRIPT", err)
	}
	var re redis.Error
	if !errors.As(err, &re) {
		t.Errorf("the error %T is not a redis.Error", err)
	}
	if _, err := n.Do(ctx, []any{"NOSUCHCOMMAND"}); err == nil || !strings.HasPrefix(err.Error(), "ERR") {
		t.Errorf("an unknown command = %v, want the server's ERR", err)
	}
	// The connection that carried the error replies is still good.
	if v, err := n.Do(ctx, []any{"PING"}); v != "PONG" || err != nil {
		t.Errorf("PING after error replies = %v, %v", v, err)
	}
	if _, err := n.Do(ctx, []any{42}); err == nil {
		t.Error("a command whose name is not a string was sent")
	}
}

// A hung server holds a command no longer than its context allows, on a
// pooled connection or on one dialed for it, and the error is one
// redlock's breaker counts as a timeout (redistest.HungNode); a timed-out
// connection is closed, not pooled.
func TestNode_hungServer(t *testing.T) {
	var nodes []*node
	redistest.HungNode(t, redistest.Redis, func(t *testing.T) redlock.Node {
		n := testNode(t)
		nodes = append(nodes, n)
		return n
	}, func(t *testing.T, n redlock.Node) {
		if c := n.(*node).pool.IdleCount(); c != 1 {
			t.Fatalf("%d idle connections after a command, want 1", c)
		}
	})
	for i, n := range nodes {
		if c := n.pool.ActiveCount(); c != 0 {
			t.Errorf("node %d: %d connections left after a timeout, want the timed-out one closed", i, c)
		}
	}

	// Without a deadline the command ends when its context is cancelled
	// (the server is still hung).
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := testNode(t).Do(ctx, []any{"SET", "redigo-test:hung", "v", "PX", int64(1000)})
	if took := time.Since(start); !errors.Is(err, context.Canceled) || took > 350*time.Millisecond {
		t.Errorf("SET on a hung server, cancelled after 100ms: %v after %v, want context.Canceled within 350ms", err, took)
	}
}

func TestSubscriber(t *testing.T) {
	n := testNode(t)
	ctx := ctxFor(t, 5*time.Second)
	sub, err := n.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ch := "redigo-test:" + t.Name()
	if err := sub.Subscribe(ctx, ch); err != nil {
		t.Fatal(err)
	}
	if ev, err := sub.Receive(ctx); err != nil || ev != (redlock.Event{Kind: redlock.Subscribed, Channel: ch}) {
		t.Fatalf("Receive after SUBSCRIBE = %+v, %v", ev, err)
	}
	if _, err := n.Do(ctx, []any{"PUBLISH", ch, ""}); err != nil {
		t.Fatal(err)
	}
	if ev, err := sub.Receive(ctx); err != nil || ev != (redlock.Event{Kind: redlock.Message, Channel: ch}) {
		t.Fatalf("Receive after PUBLISH = %+v, %v", ev, err)
	}
	if err := sub.Unsubscribe(ctx, ch); err != nil {
		t.Fatal(err)
	}
	if ev, err := sub.Receive(ctx); err != nil || ev.Kind != redlock.Other {
		t.Fatalf("Receive after UNSUBSCRIBE = %+v, %v", ev, err)
	}

	// Close makes a blocked Receive return.
	got := make(chan error, 1)
	go func() {
		_, err := sub.Receive(ctx)
		got <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := sub.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	select {
	case err := <-got:
		if err == nil {
			t.Error("Receive on a closed subscription succeeded")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not make a blocked Receive return")
	}
	if err := sub.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

// A cancelled context makes a blocked Receive return too, and the
// connection is then closed.
func TestSubscriber_cancel(t *testing.T) {
	n := testNode(t)
	sub, err := n.Subscribe(ctxFor(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := sub.Receive(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Receive with a context that ends = %v", err)
	}
	if err := sub.Subscribe(context.Background(), "x"); err == nil {
		t.Error("Subscribe on a connection whose Receive failed succeeded")
	}
}
