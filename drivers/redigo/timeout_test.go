package redigo_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/internal/redistest"
)

// A hung server (SIGSTOP: it accepts connections but answers nothing)
// holds no operation past the node timeout, whether its commands go out on
// a pooled connection or on one dialed for them. (TestNode_hungServer
// checks single commands.)
func TestNodeTimeout_hungServer(t *testing.T) {
	const nodeTimeout = 100 * time.Millisecond
	const slack = 250 * time.Millisecond // scheduling on a loaded machine
	// A failed acquisition on a single node is undone by redlock on the
	// caller's goroutine under redlock's own cleanup timeout (1s), and
	// then released by the core under the node timeout.
	const failedAcquire = nodeTimeout + time.Second + nodeTimeout
	addrs := redistest.Servers(t)
	faults := redistest.NewFaults(t, 1)
	dsn := redistest.DSN(addrs[:1], "node_timeout="+nodeTimeout.String())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	warm, err := lock.Open("redigo", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer warm.Close()
	key := "hung-" + strconv.FormatInt(time.Now().UnixNano(), 36)       // fresh: the test leaves it held
	held, err := warm.TryAcquire(ctx, key, lock.WithTTL(5*time.Second)) // leaves a pooled connection
	if err != nil {
		t.Fatal(err)
	}
	cold, err := lock.Open("redigo", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer cold.Close()

	t.Cleanup(func() { faults.Restart(t, 0) })
	faults.Hang(t, 0)

	bounded := func(name string, limit time.Duration, op func() error) {
		t.Helper()
		start := time.Now()
		err := op()
		took := time.Since(start)
		t.Logf("%s on a hung server: %v after %v", name, err, took)
		if err == nil {
			t.Errorf("%s succeeded on a hung server", name)
		} else if errors.Is(err, lock.ErrNotAcquired) {
			t.Errorf("%s = %v; a hung server is not a held key", name, err)
		}
		if took > limit+slack {
			t.Errorf("%s took %v on a hung server, over %v", name, took, limit)
		}
	}
	bounded("TryAcquire (pooled connection)", failedAcquire, func() error {
		_, err := warm.TryAcquire(ctx, key+"-2")
		return err
	})
	bounded("TryAcquire (new connection)", failedAcquire, func() error {
		_, err := cold.TryAcquire(ctx, key+"-3")
		return err
	})
	bounded("Extend", nodeTimeout, func() error { return held.Extend(ctx, time.Minute) })
	bounded("Ping", nodeTimeout, func() error { return cold.Ping(ctx) })
	bounded("Release", nodeTimeout, func() error { return held.Release(ctx) })

	// A waiter gives up when its context ends, although the node never
	// answers its subscription.
	wctx, wcancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer wcancel()
	start := time.Now()
	if _, err := cold.Acquire(wctx, key); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Acquire on a hung server = %v, want it to end with its context", err)
	}
	if took := time.Since(start); took > 300*time.Millisecond+failedAcquire+slack {
		t.Errorf("Acquire with a 300ms context took %v on a hung server", took)
	}
}
