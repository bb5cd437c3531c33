package pgguard_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/distlock/lock/fencing"
	"github.com/distlock/lock/fencing/pgguard"
)

func TestAdmit_equalTokenTwice(t *testing.T) {
	pool := newPool(t)
	g, table := newGuard(t, pool)
	admitAndCommit(t, pool, g, "r", 7)
	admitAndCommit(t, pool, g, "r", 7)
	tx := begin(t, pool) // twice in one transaction, too
	for range 2 {
		if err := g.Admit(t.Context(), tx, "r", 7); err != nil {
			t.Fatalf("Admit(7) again in one transaction: %v", err)
		}
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := newest(t, pool, table, "r"); got != 7 {
		t.Fatalf("fence = %d, want 7", got)
	}
}

func TestAdmit_olderTokenIsStale(t *testing.T) {
	pool := newPool(t)
	g, table := newGuard(t, pool)
	admitAndCommit(t, pool, g, "r", 5)
	admitAndCommit(t, pool, g, "other", 1) // resources are independent
	tx := begin(t, pool)
	wantStale(t, g.Admit(t.Context(), tx, "r", 4), "r", 4, 5)
	// The caller's transaction is still sound, and rolls back cleanly.
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatalf("Rollback after a stale Admit: %v", err)
	}
	if got := newest(t, pool, table, "r"); got != 5 {
		t.Fatalf("fence = %d after a stale Admit, want 5", got)
	}
	admitAndCommit(t, pool, g, "r", 6)
	if got := newest(t, pool, table, "r"); got != 6 {
		t.Fatalf("fence = %d, want 6", got)
	}
}

func TestAdmit_zeroToken(t *testing.T) {
	// No server: the token is refused before the transaction is used.
	g, err := pgguard.New(t.Context(), nil, pgguard.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Admit(t.Context(), nil, "r", 0); !errors.Is(err, fencing.ErrNoToken) {
		t.Fatalf("Admit(0) = %v, want an error matching fencing.ErrNoToken", err)
	}
}

func TestAdmit_zeroTokenOnServer(t *testing.T) {
	pool := newPool(t)
	g, table := newGuard(t, pool)
	tx := begin(t, pool)
	if err := g.Admit(t.Context(), tx, "r", 0); !errors.Is(err, fencing.ErrNoToken) {
		t.Fatalf("Admit(0) = %v, want an error matching fencing.ErrNoToken", err)
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := newest(t, pool, table, "r"); got != 0 {
		t.Fatalf("fence = %d after Admit(0), want no row", got)
	}
}

func TestAdmit_tokenAboveMaxInt64(t *testing.T) {
	pool := newPool(t)
	g, table := newGuard(t, pool)
	admitAndCommit(t, pool, g, "r", math.MaxInt64) // the largest is fine
	for _, tok := range []fencing.Token{math.MaxInt64 + 1, math.MaxUint64} {
		tx := begin(t, pool)
		err := g.Admit(t.Context(), tx, "r", tok)
		if !errors.Is(err, pgguard.ErrTokenRange) || errors.Is(err, fencing.ErrStale) {
			t.Fatalf("Admit(%d) = %v, want an error matching pgguard.ErrTokenRange, not fencing.ErrStale", tok, err)
		}
		if err := g.Do(t.Context(), "r", tok, nil); !errors.Is(err, pgguard.ErrTokenRange) {
			t.Fatalf("Do(%d) = %v, want an error matching pgguard.ErrTokenRange", tok, err)
		}
	}
	if got := newest(t, pool, table, "r"); got != math.MaxInt64 {
		t.Fatalf("fence = %d, want %d", got, int64(math.MaxInt64))
	}
}

// An admission takes effect only if its transaction commits.
func TestAdmit_rolledBackAdmissionLeavesNoTrace(t *testing.T) {
	pool := newPool(t)
	g, table := newGuard(t, pool)
	admitAndCommit(t, pool, g, "r", 3)
	tx := begin(t, pool)
	if err := g.Admit(t.Context(), tx, "r", 9); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := newest(t, pool, table, "r"); got != 3 {
		t.Fatalf("fence = %d after a rolled-back Admit(9), want 3", got)
	}
	admitAndCommit(t, pool, g, "r", 5)
}

// A second admission for a resource waits for the first one's transaction
// to end, and then sees its outcome.
func TestAdmit_waitsForTheRowLock(t *testing.T) {
	cases := []struct {
		name          string
		first, second fencing.Token
		commitFirst   bool
		wantNewest    fencing.Token // 0: the second is admitted
	}{
		{"newer after commit", 5, 7, true, 0},
		{"older after commit", 7, 5, true, 7},
		{"older after rollback", 7, 5, false, 0},
		{"equal after commit", 7, 7, true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pool := newPool(t)
			g, _ := newGuard(t, pool)
			admitAndCommit(t, pool, g, "r", 1)
			tx1, tx2 := begin(t, pool), begin(t, pool)
			if err := g.Admit(t.Context(), tx1, "r", c.first); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- g.Admit(t.Context(), tx2, "r", c.second) }()
			select {
			case err := <-done:
				t.Fatalf("the second Admit returned (%v) while the first transaction held the row", err)
			case <-time.After(200 * time.Millisecond):
			}
			end := tx1.Rollback
			if c.commitFirst {
				end = tx1.Commit
			}
			if err := end(t.Context()); err != nil {
				t.Fatal(err)
			}
			err := <-done
			if c.wantNewest == 0 {
				if err != nil {
					t.Fatalf("second Admit(%d): %v", c.second, err)
				}
				return
			}
			wantStale(t, err, "r", c.second, c.wantNewest)
		})
	}
}

// At REPEATABLE READ an admission after another transaction's, committed
// since the snapshot, fails with a serialization failure, as documented.
func TestAdmit_repeatableReadSerializationFailure(t *testing.T) {
	pool := newPool(t)
	g, _ := newGuard(t, pool)
	admitAndCommit(t, pool, g, "r", 1)
	tx, err := pool.BeginTx(t.Context(), pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(context.Background()) })
	if _, err := tx.Exec(t.Context(), "SELECT 1"); err != nil { // takes the snapshot
		t.Fatal(err)
	}
	admitAndCommit(t, pool, g, "r", 5)
	err = g.Admit(t.Context(), tx, "r", 7)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "40001" {
		t.Fatalf("Admit at REPEATABLE READ after a concurrent admission = %v, want a serialization failure (40001)", err)
	}
}
