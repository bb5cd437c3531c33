package lock_test

import (
	"context"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
)

func TestStats_countEachPath(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		sc   *scriptedConn
		run  func(t *testing.T, c *lock.Client)
		want lock.Stats
	}{
		{"fresh client", &scriptedConn{}, func(*testing.T, *lock.Client) {}, lock.Stats{}},
		{"acquired", &scriptedConn{}, func(t *testing.T, c *lock.Client) { mustAcquire(t, c, "k") },
			lock.Stats{Acquired: 1}},
		{"contended", &scriptedConn{onAcquire: heldAlways}, func(t *testing.T, c *lock.Client) {
			c.TryAcquire(ctx, "k")
			c.TryAcquire(ctx, "k")
		}, lock.Stats{Contended: 2}},
		{"failed", &scriptedConn{onAcquire: func(context.Context, int, string) (driver.Lease, error) {
			return driver.Lease{}, errBackendDown
		}}, func(t *testing.T, c *lock.Client) { c.TryAcquire(ctx, "k") }, lock.Stats{Failed: 1}},
		{"invalid options count nothing", &scriptedConn{}, func(t *testing.T, c *lock.Client) {
			c.TryAcquire(ctx, "")
			c.TryAcquire(ctx, "k", lock.WithTTL(0))
		}, lock.Stats{}},
		{"released", &scriptedConn{}, func(t *testing.T, c *lock.Client) {
			mustAcquire(t, c, "k").Release(ctx)
		}, lock.Stats{Acquired: 1, Released: 1}},
		{"failed release", &scriptedConn{onRelease: func(context.Context, int) error { return errBackendDown }},
			func(t *testing.T, c *lock.Client) { mustAcquire(t, c, "k").Release(ctx) },
			lock.Stats{Acquired: 1}},
		{"extended", &scriptedConn{}, func(t *testing.T, c *lock.Client) {
			l := mustAcquire(t, c, "k")
			l.Extend(ctx, time.Second)
			l.Extend(ctx, time.Second)
		}, lock.Stats{Acquired: 1, Extended: 2}},
		{"lost on extend", &scriptedConn{onExtend: func(context.Context, int) error { return driver.ErrNotHeld }},
			func(t *testing.T, c *lock.Client) {
				l := mustAcquire(t, c, "k")
				l.Extend(ctx, time.Second)
				l.Extend(ctx, time.Second)
				l.Release(ctx)
			}, lock.Stats{Acquired: 1, Lost: 1}},
		{"lost on release", &scriptedConn{onRelease: func(context.Context, int) error { return driver.ErrNotHeld }},
			func(t *testing.T, c *lock.Client) {
				l := mustAcquire(t, c, "k")
				l.Release(ctx)
				l.Release(ctx)
			}, lock.Stats{Acquired: 1, Lost: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := openScripted(t, tt.sc, true)
			tt.run(t, c)
			if got := c.Stats(); got != tt.want {
				t.Errorf("Stats = %+v, want %+v", got, tt.want)
			}
		})
	}
}
