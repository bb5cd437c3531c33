package redigo_test

import (
	"context"
	"testing"

	"github.com/distlock/lock"
	"github.com/distlock/lock/internal/redistest"
)

func BenchmarkAcquireRelease(b *testing.B) {
	addrs := redistest.Servers(b)
	for _, n := range []int{1, 5} {
		b.Run(map[int]string{1: "N=1", 5: "N=5"}[n], func(b *testing.B) {
			c, err := lock.Open("redigo", redistest.DSN(addrs[:n], ""))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				l, err := c.TryAcquire(ctx, "bench")
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
