package sqlguard_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock/fencing"
	"github.com/distlock/lock/fencing/sqlguard"
)

func TestAdmit_equalTokenTwice(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		db := b.open(t)
		g, table := newGuard(t, b, db)
		admitAndCommit(t, db, g, "r", 7)
		admitAndCommit(t, db, g, "r", 7)
		tx := begin(t, db, nil) // twice in one transaction, too
		for range 2 {
			if err := g.Admit(t.Context(), tx, "r", 7); err != nil {
				t.Fatalf("Admit(7) again in one transaction: %v", err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if got := newest(t, b, db, table, "r"); got != 7 {
			t.Fatalf("fence = %d, want 7", got)
		}
	})
}

func TestAdmit_olderTokenIsStale(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		db := b.open(t)
		g, table := newGuard(t, b, db)
		admitAndCommit(t, db, g, "r", 5)
		admitAndCommit(t, db, g, "other", 1) // resources are independent
		tx := begin(t, db, nil)
		wantStale(t, g.Admit(t.Context(), tx, "r", 4), "r", 4, 5)
		// The caller's transaction is still sound, and rolls back cleanly.
		if err := tx.Rollback(); err != nil {
			t.Fatalf("Rollback after a stale Admit: %v", err)
		}
		if got := newest(t, b, db, table, "r"); got != 5 {
			t.Fatalf("fence = %d after a stale Admit, want 5", got)
		}
		admitAndCommit(t, db, g, "r", 6)
		if got := newest(t, b, db, table, "r"); got != 6 {
			t.Fatalf("fence = %d, want 6", got)
		}
	})
}

// Resources are told apart by their bytes: no collation folds case,
// accents or trailing spaces into one fence.
func TestAdmit_resourcesAreExactBytes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		db := b.open(t)
		g, table := newGuard(t, b, db)
		admitAndCommit(t, db, g, "r", 5)
		for _, r := range []string{"R", "r ", "ŕ", " r"} {
			admitAndCommit(t, db, g, r, 1)
			if got := newest(t, b, db, table, r); got != 1 {
				t.Fatalf("fence of %q = %d, want 1", r, got)
			}
		}
		if got := newest(t, b, db, table, "r"); got != 5 {
			t.Fatalf("fence of \"r\" = %d, want 5", got)
		}
	})
}

// Tokens and resources that no table can take are refused before the
// transaction is used, so no server is needed.
func TestAdmit_refusedBeforeTheServer(t *testing.T) {
	cases := []struct {
		name     string
		resource string
		token    fencing.Token
		want     error // nil: any error but these
	}{
		{"zeroToken", "r", 0, fencing.ErrNoToken},
		{"tokenAboveMaxInt64", "r", math.MaxInt64 + 1, sqlguard.ErrTokenRange},
		{"largestToken", "r", math.MaxUint64, sqlguard.ErrTokenRange},
		{"resourceTooLong", strings.Repeat("r", sqlguard.MaxResourceLen+1), 1, nil},
	}
	for _, d := range []sqlguard.Dialect{sqlguard.MySQL, sqlguard.PostgreSQL} {
		g, err := sqlguard.New(t.Context(), nil, sqlguard.Config{Dialect: d})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			t.Run(d.String()+"/"+c.name, func(t *testing.T) {
				for op, err := range map[string]error{
					"Admit": g.Admit(t.Context(), nil, c.resource, c.token), // a nil tx is never used
					"Do":    g.Do(t.Context(), c.resource, c.token, nil),
				} {
					if err == nil || errors.Is(err, fencing.ErrStale) || (c.want != nil && !errors.Is(err, c.want)) {
						t.Errorf("%s(%.10q, %d) = %v, want an error matching %v, not fencing.ErrStale", op, c.resource, c.token, err, c.want)
					}
				}
			})
		}
	}
}

func TestAdmit_zeroTokenOnServer(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		db := b.open(t)
		g, table := newGuard(t, b, db)
		tx := begin(t, db, nil)
		if err := g.Admit(t.Context(), tx, "r", 0); !errors.Is(err, fencing.ErrNoToken) {
			t.Fatalf("Admit(0) = %v, want an error matching fencing.ErrNoToken", err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if got := newest(t, b, db, table, "r"); got != 0 {
			t.Fatalf("fence = %d after Admit(0), want no row", got)
		}
	})
}

func TestAdmit_largestTokens(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		db := b.open(t)
		g, table := newGuard(t, b, db)
		admitAndCommit(t, db, g, "r", math.MaxInt64-1)
		admitAndCommit(t, db, g, "r", math.MaxInt64) // the largest is fine
		tx := begin(t, db, nil)
		wantStale(t, g.Admit(t.Context(), tx, "r", math.MaxInt64-1), "r", math.MaxInt64-1, math.MaxInt64)
		if got := newest(t, b, db, table, "r"); got != math.MaxInt64 {
			t.Fatalf("fence = %d, want %d", got, int64(math.MaxInt64))
		}
	})
}

// An admission takes effect only if its transaction commits.
func TestAdmit_rolledBackAdmissionLeavesNoTrace(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		db := b.open(t)
		g, table := newGuard(t, b, db)
		admitAndCommit(t, db, g, "r", 3)
		tx := begin(t, db, nil)
		if err := g.Admit(t.Context(), tx, "r", 9); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		if got := newest(t, b, db, table, "r"); got != 3 {
			t.Fatalf("fence = %d after a rolled-back Admit(9), want 3", got)
		}
		admitAndCommit(t, db, g, "r", 5)
	})
}

// A second admission for a resource waits for the first one's transaction
// to end, and then sees its outcome. The resource's first admission waits
// too, for the row the first transaction inserted.
func TestAdmit_waitsForTheRowLock(t *testing.T) {
	cases := []struct {
		name          string
		first, second fencing.Token
		commitFirst   bool
		newRow        bool          // the first admission inserts the resource's row
		wantNewest    fencing.Token // 0: the second is admitted
	}{
		{"newer after commit", 5, 7, true, false, 0},
		{"older after commit", 7, 5, true, false, 7},
		{"older after rollback", 7, 5, false, false, 0},
		{"equal after commit", 7, 7, true, false, 0},
		{"older after the first commit", 7, 5, true, true, 7},
		{"older after the first rollback", 7, 5, false, true, 0},
	}
	forEachBackend(t, func(t *testing.T, b *backend) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				db := b.open(t)
				g, _ := newGuard(t, b, db)
				if !c.newRow {
					admitAndCommit(t, db, g, "r", 1)
				}
				tx1, tx2 := begin(t, db, nil), begin(t, db, nil)
				if err := g.Admit(t.Context(), tx1, "r", c.first); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- g.Admit(t.Context(), tx2, "r", c.second) }()
				select {
				case err := <-done:
					t.Fatalf("the second Admit returned (%v) while the first transaction held the row", err)
				case <-time.After(150 * time.Millisecond):
				}
				end := tx1.Rollback
				if c.commitFirst {
					end = tx1.Commit
				}
				if err := end(); err != nil {
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
	})
}
