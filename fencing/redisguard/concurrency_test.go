package redisguard_test

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/distlock/lock/fencing"
)

const (
	writers   = 32
	maxToken  = 200
	resource  = "account/1"
	maxRepeat = 3 // each token is written 1 to maxRepeat times
	rounds    = 4 // of each order, on fresh keys: a race shows in some rounds only
)

// orders are the orders in which the writers take the tokens: at random,
// where a few record tokens are admitted and most are refused, and nearly
// ascending (each token moved by up to a few dozen places), where many
// are admitted, some while writes with the same token run.
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

// writeFunc makes write number n, with token, through the guard.
type writeFunc func(ctx context.Context, f *fixture, n int, token fencing.Token) error

// writesInOrder has many writers write through the guard at once, with the
// tokens 1..maxToken in the given order, some of them several times, and
// checks that every refusal was a stale error naming a newer token, and
// that the fence ends at the highest token. It returns the fixture and
// the numbers of the writes admitted, with their tokens.
func writesInOrder(t *testing.T, order func([]fencing.Token), write writeFunc) (*fixture, map[int]fencing.Token) {
	f := newFixture(t)
	var work []fencing.Token
	for tok := fencing.Token(1); tok <= maxToken; tok++ {
		for range 1 + rand.IntN(maxRepeat) {
			work = append(work, tok)
		}
	}
	order(work)
	queue := make(chan int, len(work))
	for n := range work {
		queue <- n
	}
	close(queue)

	var (
		mu       sync.Mutex
		admitted = make(map[int]fencing.Token)
		refused  int
		wg       sync.WaitGroup
	)
	for range writers {
		wg.Go(func() {
			for n := range queue {
				tok := work[n]
				err := write(t.Context(), f, n, tok)
				var se *fencing.StaleError
				switch {
				case err == nil:
					mu.Lock()
					admitted[n] = tok
					mu.Unlock()
				case errors.As(err, &se) && errors.Is(err, fencing.ErrStale) && se.Token == tok && se.Newest > tok && se.Resource == resource:
					mu.Lock()
					refused++
					mu.Unlock()
				default:
					t.Errorf("write %d, of token %d: %v; want nil or a stale error naming a newer token", n, tok, err)
				}
			}
		})
	}
	wg.Wait()
	if got := f.fence(t, resource); got != strconv.Itoa(maxToken) {
		t.Errorf("fence = %q, want %d", got, maxToken)
	}
	if refused == 0 || len(admitted) == 0 {
		t.Errorf("%d writes admitted, %d refused; want both above 0", len(admitted), refused)
	}
	t.Logf("%d writes: %d admitted, %d refused", len(work), len(admitted), refused)
	return f, admitted
}

// forRounds runs test rounds times, as subtests named name#00, name#01...
func forRounds(t *testing.T, name string, test func(*testing.T)) {
	for range rounds {
		t.Run(name, test)
	}
}

// Writers SET one key: it ends up holding the highest token's write.
func TestConcurrentWriters_set(t *testing.T) {
	for _, o := range orders {
		forRounds(t, o.name, func(t *testing.T) {
			f, _ := writesInOrder(t, o.order, func(ctx context.Context, f *fixture, n int, tok fencing.Token) error {
				return f.g.Set(ctx, resource, tok, f.key(resource, "value"), tok.String())
			})
			if got, _ := f.c.Get(t.Context(), f.key(resource, "value")).Result(); got != strconv.Itoa(maxToken) {
				t.Errorf("value = %q, want %d, the highest token's, as the fence", got, maxToken)
			}
		})
	}
}

// Writers HSET a hash: the value field, and a field of each write's own,
// so that the hash shows exactly which writes landed. The admitted ones
// did, and no refused one.
func TestConcurrentWriters_hset(t *testing.T) {
	for _, o := range orders {
		forRounds(t, o.name, func(t *testing.T) {
			f, admitted := writesInOrder(t, o.order, func(ctx context.Context, f *fixture, n int, tok fencing.Token) error {
				return f.g.HSet(ctx, resource, tok, f.key(resource, "hash"), "value", tok.String(), "write:"+strconv.Itoa(n), tok.String())
			})
			h, err := f.c.HGetAll(t.Context(), f.key(resource, "hash")).Result()
			if err != nil {
				t.Fatal(err)
			}
			if h["value"] != strconv.Itoa(maxToken) {
				t.Errorf("value = %q, want %d, the highest token's, as the fence", h["value"], maxToken)
			}
			landed := 0
			for field, tok := range h {
				n, ok := strings.CutPrefix(field, "write:")
				if !ok {
					continue
				}
				landed++
				i, _ := strconv.Atoi(n)
				if want, ok := admitted[i]; !ok || want.String() != tok {
					t.Errorf("write %d (token %s) landed, but was refused", i, tok)
				}
			}
			if landed != len(admitted) {
				t.Errorf("%d writes landed, %d admitted", landed, len(admitted))
			}
		})
	}
}
