// Package redisbench holds the benchmarks of the Redlock drivers, written
// once: drivers/goredis and drivers/redigo run them under their own names.
// Against redsync, the same shapes run in the bench module at the
// repository's root (see bench/README.md).
package redisbench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/internal/latency"
	"github.com/distlock/lock/internal/redistest"
)

// benchClient opens a client on the first n test servers with the
// driver's defaults, and query's parameters, closed when the benchmark
// ends.
func benchClient(b *testing.B, driver string, n int, query ...string) *lock.Client {
	b.Helper()
	addrs := redistest.Servers(b)
	c, err := lock.Open(driver, redistest.DSN(addrs[:n], strings.Join(query, "&")))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	// Connect to every node before timing. Ping is one attempt under the
	// node timeout, which a dial on an overloaded machine may overrun.
	var err2 error
	for range 20 {
		if err2 = c.Ping(context.Background()); err2 == nil {
			return c
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Fatal(err2)
	return nil
}

// benchKey returns a key of the benchmark's own: a run that crashed may
// have left its keys held.
func benchKey(b *testing.B, suffix string) string {
	var r [6]byte
	rand.Read(r[:])
	return "bench/" + b.Name() + "/" + hex.EncodeToString(r[:]) + suffix
}

// AcquireRelease is one uncontended TryAcquire and Release after
// another, on one key. An operation that fails (a node timed out on an
// overloaded machine) is counted in failed/op and left out of the
// percentiles and of ns/op's meaning, and the benchmark goes on with a new key, since the old one
// may stay held by a request that a node carried out after the client gave
// up on it.
//
// The N=.../fencing variants take fencing tokens: the cost of a second
// round of requests per acquisition.
func AcquireRelease(b *testing.B, driver string) {
	for _, v := range []struct {
		name  string
		n     int
		query []string
	}{{"N=1", 1, nil}, {"N=5", 5, nil}, {"N=1/fencing", 1, []string{"fencing=true"}}, {"N=5/fencing", 5, []string{"fencing=true"}}} {
		b.Run(v.name, func(b *testing.B) {
			c := benchClient(b, driver, v.n, v.query...)
			ctx := context.Background()
			key := benchKey(b, "")
			lat := latency.New(1 << 20)
			failed := 0
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				l, err := c.TryAcquire(ctx, key)
				if err == nil {
					err = l.Release(ctx)
				}
				if err != nil {
					failed++
					key = benchKey(b, fmt.Sprint(failed))
					continue
				}
				lat.Add(time.Since(start))
			}
			b.ReportMetric(float64(failed)/float64(b.N), "failed/op")
			latency.Report(b, "", "µs", lat)
		})
	}
}

// AcquireRelease16keys is 16 goroutines sharing one client, each
// acquiring and releasing a key of its own. ns/op is the wall time per
// acquire+release of all of them together. Failures are counted as in
// AcquireRelease.
func AcquireRelease16keys(b *testing.B, driver string) {
	const goroutines = 16
	for _, n := range []int{1, 5} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			c := benchClient(b, driver, n)
			ctx := context.Background()
			lats := make([]*latency.Recorder, goroutines)
			keys := make([]string, goroutines)
			for g := range lats {
				lats[g] = latency.New(1 << 16)
				keys[g] = benchKey(b, fmt.Sprintf("/%d", g))
			}
			var next, failed atomic.Int64
			var wg sync.WaitGroup
			b.ReportAllocs()
			b.ResetTimer()
			for g := range goroutines {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						start := time.Now()
						l, err := c.TryAcquire(ctx, keys[g])
						if err == nil {
							err = l.Release(ctx)
						}
						if err != nil {
							keys[g] = benchKey(b, fmt.Sprintf("/%d/%d", g, failed.Add(1)))
							continue
						}
						lats[g].Add(time.Since(start))
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(failed.Load())/float64(b.N), "failed/op")
			latency.Report(b, "", "µs", lats...)
		})
	}
}

// Contended is 8 goroutines sharing one client, contending for
// one key with Acquire and its default options (waiters wake at a
// release's announcement), each holding it for 1ms. A goroutine that
// released the key contends again only once another has taken it, so that
// every acquisition is a handoff. ns/op is the time per handoff;
// handoffs/s says the same the other way round, wait-p50-ms and
// wait-p99-ms are the percentiles of Acquire's latency, and held/op counts
// the attempts per acquisition that found the key held. A Release that
// fails (a node timed out on an overloaded machine) is counted in
// unlockfailed/op: the key then stays held on some nodes until its TTL
// runs out, and the wait for it is part of the measurement.
func Contended(b *testing.B, driver string) {
	const goroutines = 8
	const hold = time.Millisecond
	for _, n := range []int{1, 5} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			c := benchClient(b, driver, n)
			ctx := context.Background()
			key := benchKey(b, "")
			lats := make([]*latency.Recorder, goroutines)
			for g := range lats {
				lats[g] = latency.New(1 << 16)
			}
			var next, unlockFailed atomic.Int64
			var failed atomic.Pointer[error]
			// gen counts acquisitions; done says that no acquisition is left.
			var mu sync.Mutex
			var gen int64
			var done bool
			taken := sync.NewCond(&mu)
			var wg sync.WaitGroup
			before := c.Stats()
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for g := range goroutines {
				wg.Go(func() {
					defer func() {
						mu.Lock()
						done = true
						taken.Broadcast()
						mu.Unlock()
					}()
					for next.Add(1) <= int64(b.N) {
						t0 := time.Now()
						l, err := c.Acquire(ctx, key)
						if err != nil {
							failed.Store(&err)
							return
						}
						lats[g].Add(time.Since(t0))
						mu.Lock()
						gen++
						mine := gen
						taken.Broadcast()
						mu.Unlock()
						time.Sleep(hold)
						if l.Release(ctx) != nil {
							unlockFailed.Add(1)
						}
						mu.Lock()
						for gen == mine && !done {
							taken.Wait()
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			if err := failed.Load(); err != nil {
				b.Fatal(*err)
			}
			st := c.Stats()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "handoffs/s")
			b.ReportMetric(float64(st.Contended-before.Contended)/float64(b.N), "held/op")
			b.ReportMetric(float64(unlockFailed.Load())/float64(b.N), "unlockfailed/op")
			latency.Report(b, "wait-", "ms", lats...)
		})
	}
}
