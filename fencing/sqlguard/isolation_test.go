package sqlguard_test

import (
	"database/sql"
	"errors"
	"testing"

	"github.com/distlock/lock/fencing"
)

// isolationCase is an isolation level, and what an admission at that level
// does after another transaction raised the fence since the caller's
// snapshot.
type isolationCase struct {
	name     string
	level    sql.IsolationLevel
	snapshot bool // the caller reads the fence first, taking its snapshot

	dsnParams    string // added to the DSN
	needVariable string // a server variable without which the case is skipped

	// conflict matches the error of an admission that the server refuses
	// as a write conflict. Nil: the admission reads the newest committed
	// fence, and decides by it.
	conflict func(error) bool
}

// The caller's transaction has read the fence (1) before another
// transaction raised it to 5 and committed. Admitting 3 must then be
// refused: the statement must see 5, not the 1 of the caller's snapshot,
// or a stale holder's write would land after a newer one's. The server
// either reads the newest committed fence (MySQL at every level,
// PostgreSQL at READ COMMITTED), or refuses the transaction as a write
// conflict, which the caller retries.
func TestAdmit_seesTheNewestCommittedFence(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		for _, c := range b.isolation {
			for _, token := range []fencing.Token{3, 7} {
				t.Run(c.name+"/"+token.String(), func(t *testing.T) {
					var params []string
					if c.dsnParams != "" {
						params = append(params, c.dsnParams)
					}
					db := b.open(t, params...)
					if c.needVariable != "" {
						var name, value string
						err := db.QueryRowContext(t.Context(), "SHOW VARIABLES LIKE '"+c.needVariable+"'").Scan(&name, &value)
						if errors.Is(err, sql.ErrNoRows) {
							t.Skipf("the server has no %s", c.needVariable)
						} else if err != nil {
							t.Fatal(err)
						}
					}
					g, table := newGuard(t, b, db)
					admitAndCommit(t, db, g, "r", 1)

					tx := begin(t, db, &sql.TxOptions{Isolation: c.level})
					if c.snapshot {
						var seen int64
						if err := tx.QueryRowContext(t.Context(), b.rebind("SELECT token FROM "+b.quote(table)+" WHERE resource = ?"), "r").Scan(&seen); err != nil || seen != 1 {
							t.Fatalf("the caller's transaction read fence %d (%v), want 1", seen, err)
						}
					}
					admitAndCommit(t, db, g, "r", 5)
					err := g.Admit(t.Context(), tx, "r", token)
					switch {
					case c.conflict != nil:
						if !c.conflict(err) {
							t.Fatalf("Admit(%d) after a newer commit = %v, want a write conflict", token, err)
						}
						return
					case token < 5:
						wantStale(t, err, "r", token, 5)
						return
					case err != nil:
						t.Fatalf("Admit(%d) after 5 was committed: %v", token, err)
					}
					if err := tx.Commit(); err != nil {
						t.Fatal(err)
					}
					if got := newest(t, b, db, table, "r"); got != token {
						t.Fatalf("fence = %d, want %d", got, token)
					}
				})
			}
		}
	})
}
