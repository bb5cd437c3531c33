//go:build servers

package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/internal/testenv"
)

// redisClients are the Redlock drivers, one per Redis client library. They
// store a lock the same way, so each sees the others' locks.
var redisClients = []string{"goredis", "redigo", "rueidis", "valkey"}

// A lock taken through one Redis client library is held for every other
// one on the same servers: they refuse it, and Inspect names its holder
// and its token, until it is released.
func TestRedlock_clientsSeeEachOthersLocks(t *testing.T) {
	dsn := "redis://" + strings.Join(testenv.RedisAddrs(t), ",redis://") + "?node_timeout=250ms&fencing=true&key_prefix=interop:"
	clients := make(map[string]*lock.Client)
	for _, name := range redisClients {
		c, err := lock.Open(name, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients[name] = c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, holder := range redisClients {
		key := "interop/" + holder + "/" + time.Now().Format("150405.000000")
		l, err := clients[holder].TryAcquire(ctx, key, lock.WithTTL(10*time.Second))
		if err != nil {
			t.Fatalf("%s: TryAcquire: %v", holder, err)
		}
		for _, other := range redisClients {
			if other == holder {
				continue
			}
			if _, err := clients[other].TryAcquire(ctx, key); !errors.Is(err, lock.ErrNotAcquired) {
				t.Errorf("%s took a lock that %s holds: TryAcquire = %v, want ErrNotAcquired", other, holder, err)
			}
			if h, held, err := clients[other].Inspect(ctx, key); err != nil || !held || h.ID != l.ID() || !h.Fenced {
				t.Errorf("%s inspects a lock that %s holds: %+v, %v, %v", other, holder, h, held, err)
			}
		}
		if err := l.Release(ctx); err != nil {
			t.Fatalf("%s: Release: %v", holder, err)
		}
		for _, other := range redisClients {
			if _, held, err := clients[other].Inspect(ctx, key); err != nil || held {
				t.Errorf("after %s released, %s inspects it as held=%v (%v)", holder, other, held, err)
			}
		}
	}
}
