package sqlguard_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/distlock/lock/fencing"
	"github.com/distlock/lock/fencing/sqlguard"
)

func TestDo_writesAndCommits(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		db := b.open(t)
		g, table := newGuard(t, b, db, "_data")
		data := newValueTable(t, b, db, table)
		if err := g.Do(t.Context(), "r", 4, setValueInDo(b, data, "r", 40)); err != nil {
			t.Fatal(err)
		}
		if v, tok := value(t, b, db, data, "r"), newest(t, b, db, table, "r"); v != 40 || tok != 4 {
			t.Fatalf("value, fence = %d, %d; want 40, 4", v, tok)
		}
	})
}

func TestDo_staleTokenSkipsTheWrite(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		db := b.open(t)
		g, table := newGuard(t, b, db, "_data")
		data := newValueTable(t, b, db, table)
		if err := g.Do(t.Context(), "r", 4, setValueInDo(b, data, "r", 40)); err != nil {
			t.Fatal(err)
		}
		called := false
		err := g.Do(t.Context(), "r", 3, func(ctx context.Context) error { called = true; return nil })
		wantStale(t, err, "r", 3, 4)
		if called {
			t.Fatal("Do called write with a stale token")
		}
	})
}

// A write's error is returned as it is, and rolls back both the write and
// the admission.
func TestDo_writeErrorRollsBack(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		db := b.open(t)
		g, table := newGuard(t, b, db, "_data")
		data := newValueTable(t, b, db, table)
		if err := g.Do(t.Context(), "r", 4, setValueInDo(b, data, "r", 40)); err != nil {
			t.Fatal(err)
		}
		boom := errors.New("boom")
		err := g.Do(t.Context(), "r", 9, func(ctx context.Context) error {
			if err := setValueInDo(b, data, "r", 90)(ctx); err != nil {
				return err
			}
			return boom
		})
		if err != boom {
			t.Fatalf("Do = %v, want write's error as it is", err)
		}
		if v, tok := value(t, b, db, data, "r"), newest(t, b, db, table, "r"); v != 40 || tok != 4 {
			t.Fatalf("value, fence = %d, %d after a failed write; want 40, 4", v, tok)
		}
		if err := g.Do(t.Context(), "r", 5, setValueInDo(b, data, "r", 50)); err != nil {
			t.Fatalf("Do(5) after the failed Do(9): %v", err)
		}
	})
}

// A write that panics leaves nothing behind, and no connection stuck in
// its transaction.
func TestDo_writePanicRollsBack(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		db := b.open(t)
		g, table := newGuard(t, b, db)
		func() {
			defer func() { recover() }()
			g.Do(t.Context(), "r", 9, func(context.Context) error { panic("boom") })
		}()
		if got := newest(t, b, db, table, "r"); got != 0 {
			t.Fatalf("fence = %d after a panicking write, want no row", got)
		}
		if n := db.Stats().InUse; n != 0 {
			t.Fatalf("%d connections still in use after a panicking write", n)
		}
	})
}

// A cancelled context ends Do's transaction, and nothing is written.
func TestDo_cancelledWrite(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		db := b.open(t)
		g, table := newGuard(t, b, db)
		ctx, cancel := context.WithCancel(t.Context())
		err := g.Do(ctx, "r", 9, func(context.Context) error { cancel(); return nil })
		if err == nil || !strings.Contains(err.Error(), "committing") {
			t.Fatalf("Do with its context cancelled during the write = %v, want a failed commit", err)
		}
		if got := newest(t, b, db, table, "r"); got != 0 {
			t.Fatalf("fence = %d after a cancelled Do, want no row", got)
		}
	})
}

func TestDo_zeroToken(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		db := b.open(t)
		g, _ := newGuard(t, b, db)
		called := false
		err := g.Do(t.Context(), "r", 0, func(context.Context) error { called = true; return nil })
		if !errors.Is(err, fencing.ErrNoToken) || called {
			t.Fatalf("Do(0) = %v, write called: %v; want an error matching fencing.ErrNoToken, and no call", err, called)
		}
	})
}

func TestDo_withoutDB(t *testing.T) {
	g, err := sqlguard.New(t.Context(), nil, sqlguard.Config{Dialect: sqlguard.MySQL})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Do(t.Context(), "r", 1, nil); err == nil || !strings.Contains(err.Error(), "*sql.DB") {
		t.Fatalf("Do on a guard without a db: %v; want an error about the *sql.DB", err)
	}
}

func TestTx_outsideDo(t *testing.T) {
	if tx := sqlguard.Tx(t.Context()); tx != nil {
		t.Fatalf("Tx of a plain context = %v, want nil", tx)
	}
}
