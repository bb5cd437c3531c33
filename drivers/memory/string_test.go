package memory_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/memory"
)

// TestStore_String checks what a store prints, with every verb, while
// other goroutines use it (printing its fields would race with them).
func TestStore_String(t *testing.T) {
	store := memory.New()
	c := lock.OpenConnector(store)
	defer c.Close()
	ctx := context.Background()
	l, err := c.TryAcquire(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for j := range 50 {
				if l, err := c.TryAcquire(ctx, fmt.Sprintf("k%d-%d", i, j)); err == nil {
					l.Release(ctx)
				}
			}
		})
	}
	for range 50 {
		for _, verb := range []string{"%v", "%+v", "%s", "%#v"} {
			_ = fmt.Sprintf(verb, store)
		}
	}
	wg.Wait()
	for _, verb := range []string{"%v", "%+v", "%s", "%#v"} {
		if got, want := fmt.Sprintf(verb, store), "memory.Store(201 keys)"; got != want {
			t.Errorf("%s: got %s, want %s", verb, got, want)
		}
	}
}
