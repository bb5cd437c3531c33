package zookeeper_test

import (
	"context"
	"testing"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivertest"
	"github.com/go-zookeeper/zk"
)

// The benchmarks compare the driver, through the lock package, with
// go-zookeeper's own zk.Lock (the same recipe, blocking, with no TTL and
// no token), what its users write today, on the same ensemble in the same
// run:
//
//   - BenchmarkAcquireRelease: one uncontended acquisition and release,
//     with drivertest.BenchAcquireRelease (its paired sub-benchmark gives
//     the figure to judge by).
//   - BenchmarkHandoffs: 8 goroutines taking turns on one key, each holding
//     it for 1ms: through one client or 8 for the driver, through 8
//     sessions for zk.Lock (one zk.Lock serves one goroutine).

func BenchmarkAcquireRelease(b *testing.B) {
	full, root := dsn(b)
	zl := zk.NewLock(rawConn(b), root+"/zk.Lock/"+drivertest.RandomHex(4), zk.WorldACL(zk.PermAll))
	drivertest.BenchAcquireRelease(b, open(b, full), "zk.Lock", func(b *testing.B) {
		if err := zl.Lock(); err != nil {
			b.Fatal(err)
		}
		if err := zl.Unlock(); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkHandoffs(b *testing.B) {
	full, root := dsn(b)
	drivertest.BenchHandoff(b, func(b *testing.B) *lock.Client { return open(b, full) }, "zk.Lock/sessions=8", func(b *testing.B) drivertest.Take {
		path := root + "/zk.Lock/" + drivertest.RandomHex(4)
		ls := make([]*zk.Lock, 8)
		for i := range ls {
			ls[i] = zk.NewLock(rawConn(b), path, zk.WorldACL(zk.PermAll))
		}
		return func(ctx context.Context, g int) (func() error, error) {
			if err := ls[g].Lock(); err != nil {
				return nil, err
			}
			return ls[g].Unlock, nil
		}
	})
}
