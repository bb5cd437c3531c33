package pgguard_test

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/distlock/lock/fencing"
	"github.com/distlock/lock/fencing/pgguard"
)

const (
	writers   = 32
	maxToken  = 200
	resource  = "account/1"
	maxRepeat = 3 // each token is written 1 to maxRepeat times
)

// orders are the orders in which the writers take the tokens: at random,
// where a few record tokens are admitted and most are refused, and nearly
// ascending (each token moved by up to a few dozen places), where about
// half are admitted, many while writes with the same token run.
var orders = []struct {
	name  string
	order func([]fencing.Token)
}{
	{"shuffled", func(w []fencing.Token) {
		rand.Shuffle(len(w), func(i, j int) { w[i], w[j] = w[j], w[i] })
	}},
	{"nearlyAscending", func(w []fencing.Token) {
		type keyed struct {
			key float64
			tok fencing.Token
		}
		ks := make([]keyed, len(w))
		for i, tok := range w {
			ks[i] = keyed{float64(tok) + 40*rand.Float64(), tok}
		}
		slices.SortFunc(ks, func(a, b keyed) int { return cmp.Compare(a.key, b.key) })
		for i, k := range ks {
			w[i] = k.tok
		}
	}},
}

// protectFunc is the protected write of a token, made in tx.
type protectFunc func(ctx context.Context, tx pgx.Tx, token fencing.Token) error

// writer makes one guarded write of token with protect, and returns the
// guard's error.
type writer func(pool *pgxpool.Pool, g *pgguard.Guard, protect protectFunc) func(ctx context.Context, token fencing.Token) error

// forEachOrder runs writesInOrder in each of the orders.
func forEachOrder(t *testing.T, write writer) {
	for _, o := range orders {
		t.Run(o.name, func(t *testing.T) { writesInOrder(t, o.order, write) })
	}
}

// writesInOrder has many writers write through the guard at once, with the
// tokens 1..maxToken in the given order, some of them several times: each
// admitted write sets the protected value to its token and appends the
// token to a log table in the same transaction. It checks that the value
// ends up the highest token's, that every refusal was a stale error naming
// a newer token, that the log holds exactly the admitted writes, and that
// logged tokens never decrease (later writes never carry older tokens).
func writesInOrder(t *testing.T, order func([]fencing.Token), write writer) {
	pool := newPool(t)
	g, table := newGuard(t, pool, "_data", "_log")
	data := newValueTable(t, pool, table)
	log := pgx.Identifier{table + "_log"}.Sanitize()
	if _, err := pool.Exec(t.Context(), "CREATE TABLE "+log+" (id bigserial PRIMARY KEY, token bigint NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	do := write(pool, g, func(ctx context.Context, tx pgx.Tx, token fencing.Token) error {
		// A pause before the write, as a real one would take, widens the
		// window in which a guard whose check and write were not one step
		// would let a newer writer in between.
		time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
		if _, err := tx.Exec(ctx, "INSERT INTO "+data+" VALUES ($1, $2) ON CONFLICT (resource) DO UPDATE SET value = EXCLUDED.value", resource, int64(token)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "INSERT INTO "+log+" (token) VALUES ($1)", int64(token))
		return err
	})

	var work []fencing.Token
	for tok := fencing.Token(1); tok <= maxToken; tok++ {
		for range 1 + rand.IntN(maxRepeat) {
			work = append(work, tok)
		}
	}
	order(work)
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
	for range writers {
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
					t.Errorf("write of token %d: %v; want nil or a stale error naming a newer token", tok, err)
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	if v := value(t, pool, data, resource); v != maxToken {
		t.Errorf("protected value = %d, want %d, the highest token's", v, maxToken)
	}
	if got := newest(t, pool, table, resource); got != maxToken {
		t.Errorf("fence = %d, want %d", got, maxToken)
	}
	if admitted[maxToken] == 0 || refused == 0 {
		t.Errorf("%d writes of the highest token admitted, %d writes refused; want both above 0", admitted[maxToken], refused)
	}
	rows, err := pool.Query(t.Context(), "SELECT token FROM "+log+" ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	logged, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	counts := make(map[fencing.Token]int)
	for i, tok := range logged {
		counts[fencing.Token(tok)]++
		if i > 0 && tok < logged[i-1] {
			t.Errorf("log row %d has token %d after token %d: a write with an older token landed after a newer one", i, tok, logged[i-1])
		}
	}
	for tok := fencing.Token(1); tok <= maxToken; tok++ {
		if admitted[tok] != counts[tok] {
			t.Errorf("token %d: %d writes admitted, %d logged", tok, admitted[tok], counts[tok])
		}
	}
	t.Logf("%d writes: %d admitted (%d distinct tokens), %d refused", len(work), len(logged), len(counts), refused)
}

func TestConcurrentWriters_do(t *testing.T) {
	forEachOrder(t, func(pool *pgxpool.Pool, g *pgguard.Guard, protect protectFunc) func(context.Context, fencing.Token) error {
		return func(ctx context.Context, tok fencing.Token) error {
			return g.Do(ctx, resource, tok, func(ctx context.Context) error {
				return protect(ctx, pgguard.Tx(ctx), tok)
			})
		}
	})
}

// The same through Admit in the callers' own transactions, which roll back
// cleanly after a stale admission.
func TestConcurrentWriters_admitInCallersTransaction(t *testing.T) {
	forEachOrder(t, func(pool *pgxpool.Pool, g *pgguard.Guard, protect protectFunc) func(context.Context, fencing.Token) error {
		return func(ctx context.Context, tok fencing.Token) error {
			tx, err := pool.Begin(ctx)
			if err != nil {
				return err
			}
			if err := g.Admit(ctx, tx, resource, tok); err != nil {
				if rbErr := tx.Rollback(ctx); rbErr != nil {
					return errors.Join(err, rbErr)
				}
				return err
			}
			if err := protect(ctx, tx, tok); err != nil {
				tx.Rollback(ctx)
				return err
			}
			return tx.Commit(ctx)
		}
	})
}
