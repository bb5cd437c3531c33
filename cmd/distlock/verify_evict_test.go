package main

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distlock/lock/internal/redistest"
)

// verify fails (1) on a Redis that evicts lock keys under memory pressure,
// and it is the contention run that catches it, not only the settings
// check. The server is the test's own, with maxmemory-policy volatile-lru:
// a filler keeps its memory full with keys that have no TTL, so that the
// lock keys, which have one, are the only keys it may evict. A held lock
// whose key is evicted is free for the next worker at once: overlaps.
// The same server without the filler evicts nothing, and the run finds
// no broken promise (its settings error stands).
func TestVerify_catchesEvictedLocks(t *testing.T) {
	addr := redistest.StartServer(t, "--maxmemory", "4mb", "--maxmemory-policy", "volatile-lru")
	dsn := "redis://" + addr + "?node_timeout=250ms"
	args := append([]string{"verify", "--driver", "goredis", "--dsn", dsn}, verifyShort...)

	calm := verifyOutput(t, runDistlock(t, nil, args...))
	t.Logf("without the filler: %s", runSummary(calm.Run))
	if calm.OK || !hasFinding(calm, "error", "redis-maxmemory-policy") {
		t.Errorf("the settings check did not find the eviction policy: %+v", calm.Findings)
	}
	if n := brokenCount(calm.Run); n != 0 || calm.Run.Holdings == 0 {
		t.Fatalf("without memory pressure the run broke %d promises in %d holdings: the filler would prove nothing", n, calm.Run.Holdings)
	}

	ctx, stop := context.WithCancel(context.Background())
	filled := make(chan int64, 1)
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	var full atomic.Bool
	go func() { filled <- fill(ctx, rdb, &full) }()
	for deadline := time.Now().Add(10 * time.Second); !full.Load(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("the filler did not reach maxmemory within 10s (%d keys)", <-filled)
		}
	}
	r := runDistlock(t, nil, args...)
	stop()
	t.Logf("the filler wrote %d keys", <-filled)
	out := verifyOutput(t, r)
	t.Logf("with the filler: %s", runSummary(out.Run))
	r.want(t, exitUnsafe)
	if brokenCount(out.Run) == 0 || len(out.Run.Pairs) == 0 {
		t.Fatalf("the evicted locks were not caught: %+v", out.Run)
	}
	t.Logf("first pair: %+v", out.Run.Pairs[0])
}

// brokenCount is the number of promises a run found broken.
func brokenCount(r runJSON) int {
	return r.Overlaps + r.TokenRegressions + r.LostWrites + r.ReturnedExpired
}

// hasFinding reports whether out has a finding of severity and rule.
func hasFinding(out contentionJSON, severity, rule string) bool {
	for _, f := range out.Findings {
		if f.Severity == severity && f.Rule == rule {
			return true
		}
	}
	return false
}

// fill keeps rdb's memory at its maxmemory with 4KB keys that have no
// TTL, until ctx ends, and returns how many it wrote. Once a write is
// refused (OOM: nothing with a TTL is left to evict), it deletes its
// oldest key and sets full, so that each later write finds the memory
// at the limit and makes the server evict what keys with a TTL there are.
func fill(ctx context.Context, rdb *redis.Client, full *atomic.Bool) int64 {
	value := strings.Repeat("x", 4<<10)
	var next, oldest int64
	for ctx.Err() == nil {
		err := rdb.Set(ctx, fmt.Sprintf("filler/%d", next), value, 0).Err()
		switch {
		case err == nil:
			next++
			if full.Load() {
				time.Sleep(2 * time.Millisecond)
			}
		case strings.HasPrefix(err.Error(), "OOM"):
			full.Store(true)
			rdb.Del(ctx, fmt.Sprintf("filler/%d", oldest))
			oldest++
		default:
			time.Sleep(10 * time.Millisecond) // a run ending; ctx says when to stop
		}
	}
	return next
}
