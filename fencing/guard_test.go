package fencing_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/distlock/lock/fencing"
)

// Many writers with shuffled tokens: the value left is the one written with
// the highest token, and every refusal names a newer admitted token.
func TestMemoryGuard_concurrentWritersKeepTheNewest(t *testing.T) {
	g := fencing.NewMemoryGuard()
	var (
		mu      sync.Mutex
		value   fencing.Token // the protected resource
		history []fencing.Token
	)
	tokens := rand.Perm(500)
	var wg sync.WaitGroup
	for _, n := range tokens {
		tok := fencing.Token(n + 1)
		wg.Go(func() {
			err := g.Do(context.Background(), "r", tok, func(context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				value = tok
				history = append(history, tok)
				return nil
			})
			var stale *fencing.StaleError
			switch {
			case err == nil:
			case errors.As(err, &stale) && errors.Is(err, fencing.ErrStale):
				if stale.Token != tok || stale.Newest <= tok || stale.Resource != "r" {
					t.Errorf("StaleError %+v for token %v", stale, tok)
				}
			default:
				t.Errorf("Do(%v) = %v", tok, err)
			}
		})
	}
	wg.Wait()
	if value != 500 {
		t.Errorf("value = %v, want 500, the highest token", value)
	}
	for i := 1; i < len(history); i++ {
		if history[i] < history[i-1] {
			t.Fatalf("write with token %v landed after one with %v", history[i], history[i-1])
		}
	}
	if got := g.Newest("r"); got != 500 {
		t.Errorf("Newest = %v, want 500", got)
	}
}

func TestMemoryGuard_equalTokensAdmittedZeroRefused(t *testing.T) {
	g := fencing.NewMemoryGuard()
	ctx := context.Background()
	for range 2 {
		if err := g.Admit(ctx, "r", 7); err != nil {
			t.Fatalf("Admit of the newest token = %v, want nil (a holder may write twice)", err)
		}
	}
	if err := g.Admit(ctx, "r", 6); !errors.Is(err, fencing.ErrStale) {
		t.Errorf("Admit of an older token = %v, want ErrStale", err)
	}
	if err := g.Admit(ctx, "r", 0); !errors.Is(err, fencing.ErrNoToken) {
		t.Errorf("Admit of the zero token = %v, want ErrNoToken", err)
	}
	if err := g.Admit(ctx, "other", 1); err != nil {
		t.Errorf("resources are independent: Admit(other, 1) = %v", err)
	}
}

// A write that fails records nothing: the next, older token is still
// admitted.
func TestMemoryGuard_failedWriteLeavesNewestAlone(t *testing.T) {
	g := fencing.NewMemoryGuard()
	ctx := context.Background()
	boom := errors.New("disk full")
	if err := g.Do(ctx, "r", 9, func(context.Context) error { return boom }); err != boom {
		t.Fatalf("Do = %v, want the write's error", err)
	}
	if err := g.Admit(ctx, "r", 5); err != nil {
		t.Errorf("after a failed write with token 9, Admit(5) = %v, want nil", err)
	}
}
