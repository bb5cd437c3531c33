package locktest_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/fencing"
	"github.com/distlock/lock/locktest"
)

// TestSupersede_heldAndNextAreStale: the lock held when Supersede is
// called, and the next one, are refused by the guard. Later ones are
// admitted, and tokens keep growing.
func TestSupersede_heldAndNextAreStale(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := locktest.New()
		c := open(t, b)
		ctx := context.Background()
		g := fencing.NewMemoryGuard()
		write := func(l *lock.Lock) error {
			tok, _ := l.Token()
			return g.Do(ctx, "file", tok, func(context.Context) error { return nil })
		}
		var toks []fencing.Token
		acquire := func() *lock.Lock {
			t.Helper()
			l, err := c.Acquire(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			tok, _ := l.Token()
			toks = append(toks, tok)
			return l
		}

		held := acquire()
		if err := write(held); err != nil {
			t.Fatalf("write before Supersede: %v", err)
		}
		if err := b.Supersede(ctx, "k", g, "file"); err != nil {
			t.Fatal(err)
		}
		if err := write(held); !errors.Is(err, fencing.ErrStale) {
			t.Errorf("write of the held lock after Supersede = %v, want ErrStale", err)
		}
		if !b.Holds("k", toks[0]) {
			t.Error("Supersede ended the lock: it should only make its token stale")
		}
		held.Release(ctx)

		next := acquire()
		if err := write(next); !errors.Is(err, fencing.ErrStale) {
			t.Errorf("write of the next lock = %v, want ErrStale", err)
		}
		next.Release(ctx)

		later := acquire()
		if err := write(later); err != nil {
			t.Errorf("write of a later lock = %v, want nil", err)
		}
		later.Release(ctx)
		if toks[0] >= toks[1] || toks[1] >= toks[2] || g.Newest("file") != toks[2] {
			t.Errorf("tokens %v, newest admitted %v; want growing tokens, the last one admitted", toks, g.Newest("file"))
		}
	})
}

// TestSupersede_beforeAnyLock: on a key never held, the first lock is
// stale.
func TestSupersede_beforeAnyLock(t *testing.T) {
	b := locktest.New()
	c := open(t, b)
	ctx := context.Background()
	g := fencing.NewMemoryGuard()
	if err := b.Supersede(ctx, "k", g, "file"); err != nil {
		t.Fatal(err)
	}
	err := c.Do(ctx, "k", func(ctx context.Context) error {
		tok, _ := lock.FromContext(ctx).Token()
		return g.Do(ctx, "file", tok, nil)
	})
	if !errors.Is(err, fencing.ErrStale) {
		t.Errorf("Do = %v, want ErrStale", err)
	}
}

// TestSupersede_badInput: a nil guard or context is no panic, and a guard
// that refuses is reported.
func TestSupersede_badInput(t *testing.T) {
	b := locktest.New()
	if err := b.Supersede(context.Background(), "k", nil, "file"); err == nil {
		t.Error("Supersede with a nil guard succeeded")
	}
	g := fencing.NewMemoryGuard()
	//lint:ignore SA1012 a nil context is what this checks
	if err := b.Supersede(nil, "k", g, "file"); err != nil {
		t.Errorf("Supersede with a nil context = %v", err)
	}
	g.Admit(context.Background(), "other", 100)
	if err := b.Supersede(context.Background(), "k", g, "other"); !errors.Is(err, fencing.ErrStale) {
		t.Errorf("Supersede at a guard with a newer token = %v, want its ErrStale", err)
	}
}

// TestSupersede_unfenced: on a driver without tokens, Supersede says so.
func TestSupersede_unfenced(t *testing.T) {
	b := locktest.Wrap(connectorOf{&plainConn{}})
	c := open(t, b)
	ctx := context.Background()
	l, err := c.Acquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	if err := b.Supersede(ctx, "k", fencing.NewMemoryGuard(), "file"); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Supersede = %v, want ErrUnsupported", err)
	}
	if !b.Holds("k", 0) {
		t.Error("Holds(k, 0) = false for a lock without a token")
	}
}

var _ driver.Conn = (*plainConn)(nil)
