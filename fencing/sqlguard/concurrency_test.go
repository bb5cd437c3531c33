package sqlguard_test

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock/fencing"
	"github.com/distlock/lock/fencing/sqlguard"
)

const (
	resource  = "account/1"
	maxRepeat = 3 // each token is written 1 to maxRepeat times
)

// load is how writesInOrder writes: with how many writers at once, the
// tokens 1 to maxToken, and the order of the writes.
type load struct {
	writers  int
	maxToken fencing.Token
	order    func([]fencing.Token)
}

// orders are the orders in which the writers take the tokens.
var orders = []struct {
	name  string
	order func([]fencing.Token)
}{
	{"shuffled", shuffled},
	{"nearlyAscending", nearlyAscending(40)},
	{"almostAscending", nearlyAscending(4)},
}

// shuffled puts the tokens in random order: a few record tokens are
// admitted, and most are refused.
func shuffled(w []fencing.Token) {
	rand.Shuffle(len(w), func(i, j int) { w[i], w[j] = w[j], w[i] })
}

// nearlyAscending returns an order that moves each token by up to about
// spread times its repeats from ascending order. The smaller the spread,
// the more writes are admitted, many while writes with the same token run.
func nearlyAscending(spread float64) func([]fencing.Token) {
	return func(w []fencing.Token) {
		type keyed struct {
			key float64
			tok fencing.Token
		}
		ks := make([]keyed, len(w))
		for i, tok := range w {
			ks[i] = keyed{float64(tok) + spread*rand.Float64(), tok}
		}
		slices.SortFunc(ks, func(a, b keyed) int { return cmp.Compare(a.key, b.key) })
		for i, k := range ks {
			w[i] = k.tok
		}
	}
}

// protectFunc is the protected write of a token, made in tx.
type protectFunc func(ctx context.Context, tx *sql.Tx, token fencing.Token) error

// writer makes one guarded write of token with protect, and returns the
// guard's error.
type writer func(db *sql.DB, g *sqlguard.Guard, protect protectFunc) func(ctx context.Context, token fencing.Token) error

// viaDo writes through Guard.Do.
func viaDo(_ *sql.DB, g *sqlguard.Guard, protect protectFunc) func(context.Context, fencing.Token) error {
	return func(ctx context.Context, tok fencing.Token) error {
		return g.Do(ctx, resource, tok, func(ctx context.Context) error {
			return protect(ctx, sqlguard.Tx(ctx), tok)
		})
	}
}

// viaAdmit writes through Admit in the writer's own transaction, which it
// rolls back after a stale admission.
func viaAdmit(db *sql.DB, g *sqlguard.Guard, protect protectFunc) func(context.Context, fencing.Token) error {
	return func(ctx context.Context, tok fencing.Token) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if err := g.Admit(ctx, tx, resource, tok); err != nil {
			if rbErr := tx.Rollback(); rbErr != nil {
				return errors.Join(err, rbErr)
			}
			return err
		}
		if err := protect(ctx, tx, tok); err != nil {
			tx.Rollback()
			return err
		}
		return tx.Commit()
	}
}

func TestConcurrentWriters(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		for _, w := range []struct {
			name  string
			write writer
		}{{"do", viaDo}, {"admitInCallersTransaction", viaAdmit}} {
			for _, o := range orders {
				t.Run(w.name+"/"+o.name, func(t *testing.T) {
					db := b.open(t)
					g, table := newGuard(t, b, db, "_data", "_log")
					for _, p := range writesInOrder(t, b, db, g, table, load{32, 100, o.order}, w.write) {
						t.Error(p)
					}
				})
			}
		}
	})
}

// The checks of writesInOrder catch broken guards: one whose statement
// raises the fence without comparing; one whose admission commits on its
// own, so that the row lock is let go before the write commits; and one
// that checks the fence with a plain, non-locking read before it raises
// it. The tokens come almost ascending, so that many are admitted at once.
func TestConcurrentWriters_catchBrokenGuards(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		broken := []struct {
			name  string
			admit func(db *sql.DB) sqlguard.AdmitFunc
		}{
			{"noCompare", func(*sql.DB) sqlguard.AdmitFunc {
				return sqlguard.Admission(b.dialect, b.noCompare)
			}},
			{"admissionInItsOwnTransaction", func(db *sql.DB) sqlguard.AdmitFunc {
				admit := sqlguard.Admission(b.dialect, nil)
				return func(ctx context.Context, _ sqlguard.Querier, ident, resource string, token int64) (int64, error) {
					return admit(ctx, db, ident, resource, token)
				}
			}},
			{"checkWithoutLock", func(*sql.DB) sqlguard.AdmitFunc {
				raise := sqlguard.Admission(b.dialect, b.noCompare)
				return func(ctx context.Context, q sqlguard.Querier, ident, resource string, token int64) (int64, error) {
					var fence int64
					err := q.QueryRowContext(ctx, b.rebind("SELECT token FROM "+ident+" WHERE resource = ?"), resource).Scan(&fence)
					if err != nil && !errors.Is(err, sql.ErrNoRows) {
						return 0, err
					}
					if fence > token {
						return fence, nil
					}
					return raise(ctx, q, ident, resource, token)
				}
			}},
		}
		for _, br := range broken {
			t.Run(br.name, func(t *testing.T) {
				// Fewer writers and tokens do. Each writer has a connection
				// for an admission besides its transaction's.
				l := load{writers: 8, maxToken: 60, order: nearlyAscending(4)}
				db := b.open(t)
				db.SetMaxOpenConns(2 * l.writers)
				// A broken guard shows only when writers interleave, which a
				// loaded machine may not let them do in one round (CI once
				// saw a round without a problem): up to five rounds, each on
				// tables of its own.
				const rounds = 5
				for round := 1; ; round++ {
					g, table := newGuard(t, b, db, "_data", "_log")
					g = sqlguard.Broken(g, br.admit(db))
					if problems := writesInOrder(t, b, db, g, table, l, viaDo); len(problems) > 0 {
						t.Logf("round %d: %d problems found, the first: %s", round, len(problems), problems[0])
						return
					}
					if round == rounds {
						t.Fatalf("writesInOrder found nothing wrong with a broken guard in %d rounds", rounds)
					}
				}
			})
		}
	})
}

// writesInOrder has l.writers write through g at once, with the tokens 1
// to l.maxToken in l.order, some of them several times. Each
// admitted write sets the protected value to its token and appends the
// token to a log table, in the same transaction. It returns what it found
// wrong: the value is not the highest token's, a refusal was not a stale
// error naming a newer token, the log does not hold exactly the admitted
// writes, or logged tokens decrease (a later write carried an older token).
func writesInOrder(t *testing.T, b *backend, db *sql.DB, g *sqlguard.Guard, table string, l load, write writer) (problems []string) {
	t.Helper()
	data := newValueTable(t, b, db, table)
	log := b.quote(table + "_log")
	if _, err := db.ExecContext(t.Context(), "CREATE TABLE "+log+" (id "+b.serial+" PRIMARY KEY, token BIGINT NOT NULL)"+b.engine); err != nil {
		t.Fatal(err)
	}
	insertLog := b.rebind("INSERT INTO " + log + " (token) VALUES (?)")
	do := write(db, g, func(ctx context.Context, tx *sql.Tx, token fencing.Token) error {
		// A pause before the write, as a real one would take, widens the
		// window in which a guard whose check and write were not one step
		// would let a newer writer in between.
		time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
		if err := setValue(ctx, b, tx, data, resource, int64(token)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, insertLog, int64(token))
		return err
	})

	var work []fencing.Token
	for tok := fencing.Token(1); tok <= l.maxToken; tok++ {
		for range 1 + rand.IntN(maxRepeat) {
			work = append(work, tok)
		}
	}
	l.order(work)
	queue := make(chan fencing.Token, len(work))
	for _, tok := range work {
		queue <- tok
	}
	close(queue)

	var (
		mu       sync.Mutex
		admitted = make(map[fencing.Token]int)
		refused  int
		wg       sync.WaitGroup
	)
	report := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	for range l.writers {
		wg.Go(func() {
			for tok := range queue {
				err := do(t.Context(), tok)
				var se *fencing.StaleError
				switch {
				case err == nil:
					mu.Lock()
					admitted[tok]++
					mu.Unlock()
				case errors.As(err, &se) && errors.Is(err, fencing.ErrStale) && se.Token == tok && se.Newest > tok && se.Resource == resource:
					mu.Lock()
					refused++
					mu.Unlock()
				default:
					report("write of token %d: %v; want nil or a stale error naming a newer token", tok, err)
				}
			}
		})
	}
	wg.Wait()

	if v := value(t, b, db, data, resource); v != int64(l.maxToken) {
		report("protected value = %d, want %d, the highest token's", v, l.maxToken)
	}
	if got := newest(t, b, db, table, resource); got != l.maxToken {
		report("fence = %d, want %d", got, l.maxToken)
	}
	if admitted[l.maxToken] == 0 || refused == 0 {
		report("%d writes of the highest token admitted, %d writes refused; want both above 0", admitted[l.maxToken], refused)
	}
	rows, err := db.QueryContext(t.Context(), "SELECT token FROM "+log+" ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	var logged []int64
	for rows.Next() {
		var tok int64
		if err := rows.Scan(&tok); err != nil {
			t.Fatal(err)
		}
		logged = append(logged, tok)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	counts := make(map[fencing.Token]int)
	for i, tok := range logged {
		counts[fencing.Token(tok)]++
		if i > 0 && tok < logged[i-1] {
			report("log row %d has token %d after token %d: a write with an older token landed after a newer one", i, tok, logged[i-1])
		}
	}
	for tok := fencing.Token(1); tok <= l.maxToken; tok++ {
		if admitted[tok] != counts[tok] {
			report("token %d: %d writes admitted, %d logged", tok, admitted[tok], counts[tok])
		}
	}
	t.Logf("%d writes: %d admitted (%d distinct tokens), %d refused", len(work), len(logged), len(counts), refused)
	return problems
}
