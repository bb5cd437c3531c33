package etcd_test

import (
	"context"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivertest"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
)

// The benchmarks compare the driver, through the lock package, with
// client/v3/concurrency's Mutex, what etcd users write today, on the same
// cluster in the same run:
//
//   - BenchmarkAcquireRelease: one uncontended acquisition and release,
//     with drivertest.BenchAcquireRelease (its paired sub-benchmark gives
//     the figure to judge by). The Mutex uses one Session (its lease kept
//     alive) made before the timer starts, and a client of all three
//     members, as its documentation shows.
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
	m := concurrency.NewMutex(newSession(b, benchClient(b)), "distlock-bench/"+drivertest.RandomHex(4))
	ctx := context.Background()
	drivertest.BenchAcquireRelease(b, open(b, dsn(b)), "concurrency.Mutex", func(b *testing.B) {
		if err := m.TryLock(ctx); err != nil {
			b.Fatal(err)
		}
		if err := m.Unlock(ctx); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkHandoff(b *testing.B) {
	full := dsn(b)
	drivertest.BenchHandoff(b, func(b *testing.B) *lock.Client { return open(b, full) }, "concurrency.Mutex/sessions=8", func(b *testing.B) drivertest.Take {
		cli := benchClient(b)
		pfx := "distlock-bench/handoff/" + drivertest.RandomHex(4)
		ms := make([]*concurrency.Mutex, 8)
		for i := range ms {
			ms[i] = concurrency.NewMutex(newSession(b, cli), pfx)
		}
		return func(ctx context.Context, g int) (func() error, error) {
			if err := ms[g].Lock(ctx); err != nil {
				return nil, err
			}
			return func() error { return ms[g].Unlock(ctx) }, nil
		}
	})
}

// BenchmarkElectionFailover measures how long an election goes without a
// leader after its leader dies and after it resigns (see
// drivertest.BenchElectionFailover).
func BenchmarkElectionFailover(b *testing.B) {
	drivertest.BenchElectionFailover(b, "etcd", dsn(b), 2*time.Second)
}
