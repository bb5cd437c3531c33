package etcd_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/internal/latency"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
)

// The benchmarks compare the driver, through the lock package, with
// client/v3/concurrency's Mutex, what etcd users write today, on the same
// cluster in the same run:
//
//   - BenchmarkAcquireRelease: one uncontended acquisition and release;
//     its paired sub-benchmark alternates the two call by call, so that
//     both meet the same cluster state and the same load from the rest of
//     the machine, and reports both p50s and their ratio (the figure to
//     judge by). The Mutex uses one Session (its lease kept alive) made
//     before the timer starts, and a client of all three members, as its
//     documentation shows.
//   - BenchmarkHandoff: 8 goroutines taking turns on one key, each holding
//     it for 1ms: through one client or 8 for the driver; through 8
//     Sessions for the Mutex (one Session's Mutexes share a key: the
//     Mutex cannot serve two goroutines of one Session).

func benchClient(b *testing.B) *clientv3.Client {
	b.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints(b), Logger: zap.NewNop()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cli.Close() })
	return cli
}

func newSession(b *testing.B, cli *clientv3.Client) *concurrency.Session {
	b.Helper()
	s, err := concurrency.NewSession(cli, concurrency.WithTTL(int(lock.DefaultTTL/time.Second)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func BenchmarkAcquireRelease(b *testing.B) {
	c := open(b, dsn(b))
	m := concurrency.NewMutex(newSession(b, benchClient(b)), "distlock-bench/"+randomHex(4))
	ctx := context.Background()
	key := "bench/" + randomHex(4)
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
			if err := m.TryLock(ctx); err != nil {
				b.Fatal(err)
			}
			if err := m.Unlock(ctx); err != nil {
				b.Fatal(err)
			}
		},
	}
	ops[0](b) // the first grant of a lease, the first connections
	ops[1](b)
	for i, name := range []string{"driver", "concurrency.Mutex"} {
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
	b.Run("paired", func(b *testing.B) {
		var lat [2]latency.Recorder
		for i := 0; b.Loop(); i++ {
			start := time.Now()
			ops[i%2](b)
			lat[i%2].Add(time.Since(start))
		}
		d, mu := lat[0].Percentile(0.5), lat[1].Percentile(0.5)
		b.ReportMetric(float64(d)/1e3, "driver-p50-µs")
		b.ReportMetric(float64(mu)/1e3, "mutex-p50-µs")
		if mu > 0 {
			b.ReportMetric(float64(d)/float64(mu), "p50-ratio")
		}
	})
}

func BenchmarkHandoff(b *testing.B) {
	const (
		goroutines = 8
		hold       = time.Millisecond
	)
	full := dsn(b)
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
	b.Run("concurrency.Mutex/sessions=8", func(b *testing.B) {
		cli := benchClient(b)
		pfx := "distlock-bench/handoff/" + randomHex(4)
		ms := make([]*concurrency.Mutex, goroutines)
		for i := range ms {
			ms[i] = concurrency.NewMutex(newSession(b, cli), pfx)
		}
		latency.Handoff(b, goroutines, hold, func(ctx context.Context, g int) (func() error, error) {
			if err := ms[g].Lock(ctx); err != nil {
				return nil, err
			}
			return func() error { return ms[g].Unlock(ctx) }, nil
		})
	})
}
