package zookeeper_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/zookeeper"
	"github.com/distlock/lock/drivertest"
)

// TestLeftovers_cancelledAndFailedAttempts has 8 clients hammer a key with
// acquisitions cut off at random moments (some while their node is being
// made), with TryAcquire, and with TTLs the ensemble refuses, while their
// sessions stay open; half-way a holder takes the key and keeps it. Once
// it lets go, no attempt's node may be left under the key: the key is
// free, and the driver's root holds no node but empty key nodes, which the
// ensemble removes itself.
func TestLeftovers_cancelledAndFailedAttempts(t *testing.T) {
	theEnsemble(t).healthy(t, 30*time.Second)
	full, root := dsn(t)
	ctx := drivertest.Context(t, 2*time.Minute)
	holder := open(t, full)
	const key = "leftovers"
	late := zookeeper.LateCreates()
	var clients []*lock.Client
	for range 8 {
		clients = append(clients, open(t, full))
	}
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		outcomes  = map[string]int{}
		unexpects []error
	)
	note := func(what string, err error, ok bool) {
		mu.Lock()
		defer mu.Unlock()
		outcomes[what]++
		if !ok && len(unexpects) < 5 {
			unexpects = append(unexpects, err)
		}
	}
	for i, c := range clients {
		wg.Go(func() {
			for j := range 100 {
				switch (i + j) % 4 {
				case 0, 1: // cut off after up to 20ms: before, during or after its attempt
					d := time.Duration(rand.N(20000)) * time.Microsecond
					actx, cancel := context.WithTimeout(ctx, d)
					l, err := c.Acquire(actx, key, lock.WithTTL(2*time.Second), lock.WithRetry(lock.FixedDelay(time.Millisecond)))
					cancel()
					if err == nil {
						note("acquired", err, l.Release(ctx) == nil)
						continue
					}
					note("cancelled", err, errors.Is(err, context.DeadlineExceeded))
				case 2:
					l, err := c.TryAcquire(ctx, key, lock.WithTTL(3*time.Second))
					if err == nil {
						note("acquired", err, l.Release(ctx) == nil)
						continue
					}
					note("held", err, errors.Is(err, lock.ErrNotAcquired))
				case 3: // the ensemble grants no session under 100ms
					_, err := c.TryAcquire(ctx, key, lock.WithTTL(50*time.Millisecond))
					note("refused TTL", err, errors.Is(err, zookeeper.ErrSessionTimeout) && !errors.Is(err, lock.ErrNotAcquired))
				}
			}
		})
	}
	// Half-way, a holder takes the key for the rest of the run, if it can.
	time.Sleep(100 * time.Millisecond)
	l, err := holder.Acquire(ctx, key, lock.WithTTL(time.Minute), lock.WithRetry(lock.FixedDelay(time.Millisecond)))
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	t.Logf("outcomes: %v; %d creates outlived their attempt", outcomes, zookeeper.LateCreates()-late)
	if len(unexpects) > 0 {
		t.Errorf("unexpected outcomes, e.g.: %v", unexpects)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatalf("the holder's Release: %v", err)
	}
	zc := rawConn(t)
	deadline := time.Now().Add(5 * time.Second)
	for {
		var attempts []string
		for _, p := range nodesUnder(t, zc, root) {
			if strings.Contains(p, "/") {
				attempts = append(attempts, p)
			}
		}
		if len(attempts) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("attempts' nodes left under %s 5s after the holder let go: %q", root, attempts)
		}
		time.Sleep(50 * time.Millisecond)
	}
	l2, err := clients[0].TryAcquire(ctx, key)
	if err != nil {
		t.Fatalf("TryAcquire once everyone stopped: %v", err)
	}
	l2.Release(ctx)
}
