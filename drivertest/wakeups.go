package drivertest

import (
	"context"
	"testing"
	"time"

	"github.com/distlock/lock"
)

// ReleaseWakes has a take key and b wait for it, polling only once a
// minute, then has a release it: only the announced release can wake b in
// time. It fails the test, with why, unless b then gets the lock (and
// releases it) within d.
func ReleaseWakes(t *testing.T, ctx context.Context, a, b *lock.Client, key string, d time.Duration, why string) {
	t.Helper()
	l, err := a.TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		l, err := b.Acquire(ctx, key, lock.WithRetry(lock.FixedDelay(time.Minute)))
		if err == nil {
			err = l.Release(ctx)
		}
		got <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(d):
		t.Fatal(why)
	}
}
