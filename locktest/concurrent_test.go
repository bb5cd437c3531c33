package locktest_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/fencing"
	"github.com/distlock/lock/locktest"
)

// TestBackend_concurrentUse: clients work on a few keys while faults are
// turned on and off from other goroutines. Run with -race.
func TestBackend_concurrentUse(t *testing.T) {
	b := locktest.New()
	g := fencing.NewMemoryGuard()
	ctx, cancel := context.WithTimeout(context.Background(), 300*ms)
	defer cancel()
	var wg sync.WaitGroup
	for i := range 4 {
		c := open(t, b)
		wg.Go(func() {
			key := fmt.Sprint("k", i%2)
			for ctx.Err() == nil {
				c.Do(ctx, key, func(ctx context.Context) error {
					time.Sleep(time.Millisecond)
					return nil
				}, lock.WithTTL(30*ms))
			}
		})
	}
	wg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			switch i % 7 {
			case 0:
				b.Lose("k0")
			case 1:
				b.FailExtensions(1, nil)
			case 2:
				b.RefuseExtensions(1)
			case 3:
				b.HangExtensions(1)
			case 4:
				b.Resume()
			case 5:
				b.DelayReleases(1, time.Millisecond)
			case 6:
				b.Unavailable(time.Millisecond)
				b.Supersede(ctx, "k1", g, "r")
			}
			_ = b.Holds("k0", 1)
			_ = b.String()
			time.Sleep(time.Millisecond)
		}
		b.Resume()
	})
	wg.Wait()
}
