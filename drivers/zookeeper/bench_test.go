package zookeeper_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/internal/latency"
	"github.com/go-zookeeper/zk"
)

// The benchmarks compare the driver, through the lock package, with
// go-zookeeper's own zk.Lock (the same recipe, blocking, with no TTL and
// no token), what its users write today, on the same ensemble in the same
// run:
//
//   - BenchmarkAcquireRelease: one uncontended acquisition and release,
//     with its p50.
//   - BenchmarkHandoffs: 8 goroutines taking turns on one key, each holding
//     it for 1ms: through one client or 8 for the driver, through 8
//     sessions for zk.Lock (one zk.Lock serves one goroutine).

func BenchmarkAcquireRelease(b *testing.B) {
	full, root := dsn(b)
	c := open(b, full)
	zc := rawConn(b)
	ctx := context.Background()
	key := "bench/" + randomHex(4)
	zl := zk.NewLock(zc, root+"/zk.Lock/"+randomHex(4), zk.WorldACL(zk.PermAll))
	ops := [2]func(*testing.B){
		func(b *testing.B) {
			l, err := c.TryAcquire(ctx, key)
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Release(ctx); err != nil {
				b.Fatal(err)
			}
		},
		func(b *testing.B) {
			if err := zl.Lock(); err != nil {
				b.Fatal(err)
			}
			if err := zl.Unlock(); err != nil {
				b.Fatal(err)
			}
		},
	}
	ops[0](b) // the first session, the key's node
	ops[1](b)
	for i, name := range []string{"driver", "zk.Lock"} {
		b.Run(name, func(b *testing.B) {
			var lat latency.Recorder
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				ops[i](b)
				lat.Add(time.Since(start))
			}
			latency.Report(b, "", "µs", &lat)
		})
	}
}

func BenchmarkHandoffs(b *testing.B) {
	const (
		goroutines = 8
		hold       = time.Millisecond
	)
	full, root := dsn(b)
	// Waiters poll once a minute: only wake-ups can keep the rate up.
	poll := lock.WithRetry(lock.FixedDelay(time.Minute))
	for _, nclients := range []int{1, goroutines} {
		clients := make([]*lock.Client, nclients)
		for i := range clients {
			clients[i] = open(b, full)
		}
		b.Run("driver/clients="+strconv.Itoa(nclients), func(b *testing.B) {
			key := "handoff/" + randomHex(4)
			latency.Handoff(b, goroutines, hold, func(ctx context.Context, g int) (func() error, error) {
				l, err := clients[g%nclients].Acquire(ctx, key, poll)
				if err != nil {
					return nil, err
				}
				return func() error { return l.Release(ctx) }, nil
			})
		})
	}
	b.Run("zk.Lock/sessions=8", func(b *testing.B) {
		path := root + "/zk.Lock/" + randomHex(4)
		ls := make([]*zk.Lock, goroutines)
		for i := range ls {
			ls[i] = zk.NewLock(rawConn(b), path, zk.WorldACL(zk.PermAll))
		}
		latency.Handoff(b, goroutines, hold, func(ctx context.Context, g int) (func() error, error) {
			if err := ls[g].Lock(); err != nil {
				return nil, err
			}
			return ls[g].Unlock, nil
		})
	})
}
