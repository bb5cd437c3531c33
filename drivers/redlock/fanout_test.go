package redlock

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/distlock/lock/internal/latency"
)

// instantNode answers every request at once, on the caller's goroutine,
// with a yes: a SET with OK, a script with 1. It keeps nothing.
type instantNode struct{ name string }

func (n instantNode) Do(_ context.Context, args []any) (any, error) {
	if args[0] == "SET" {
		return "OK", nil
	}
	return int64(1), nil
}

func (n instantNode) Subscribe(context.Context) (Subscriber, error) {
	return nil, errors.New("instantNode: no publish/subscribe")
}
func (n instantNode) String() string { return n.name }
func (n instantNode) Close() error   { return nil }

// BenchmarkFanOut is an uncontended acquisition and release through the
// algorithm alone: nodes that answer at once, in the process, so that
// what it measures is the rounds' own work (the workers, the tally, the
// timers and contexts, the bookkeeping of late SETs), which a real
// client pays on top of its nodes' round trips; cpu-µs/op is the
// process's CPU time per acquire and release (latency.CPUTime), the
// workers' included. On two cores shared with five servers, that CPU is
// latency (see bench/README.md, "The p50 line").
func BenchmarkFanOut(b *testing.B) {
	for _, n := range []int{1, 5} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			nodes := make([]Node, n)
			for i := range nodes {
				nodes[i] = instantNode{name: fmt.Sprintf("instant-%d", i)}
			}
			r, err := New(nodes)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			ctx := context.Background()
			lat := latency.New(1 << 20)
			cpu0 := latency.CPUTime()
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				if _, err := r.Acquire(ctx, "k", "v", 10*time.Second); err != nil {
					b.Fatal(err)
				}
				if err := r.Release(ctx, "k", "v"); err != nil {
					b.Fatal(err)
				}
				lat.Add(time.Since(start))
			}
			latency.ReportCPU(b, cpu0)
			latency.Report(b, "", "µs", lat)
		})
	}
}
