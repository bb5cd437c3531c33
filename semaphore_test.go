package lock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/memory"
)

// mustSemaphore returns c's semaphore of n named name, or fails the test.
func mustSemaphore(t *testing.T, c *lock.Client, name string, n int, opts ...lock.Option) *lock.Semaphore {
	t.Helper()
	s, err := c.Semaphore(name, n, opts...)
	if err != nil {
		t.Fatalf("Semaphore(%q, %d): %v", name, n, err)
	}
	return s
}

// mustPermit takes a permit of s with TryAcquire, or fails the test.
func mustPermit(t *testing.T, s *lock.Semaphore, opts ...lock.Option) *lock.Lock {
	t.Helper()
	l, err := s.TryAcquire(context.Background(), opts...)
	if err != nil {
		t.Fatalf("%v.TryAcquire: %v", s, err)
	}
	return l
}

func TestSemaphore_badInput(t *testing.T) {
	c := openMemory(t, memory.New())
	for _, tc := range []struct {
		name string
		n    int
		want error
	}{
		{"s", 0, lock.ErrInvalidOption},
		{"s", -1, lock.ErrInvalidOption},
		{"s", lock.MaxPermits + 1, lock.ErrInvalidOption},
		{"", 1, lock.ErrInvalidKey},
		{strings.Repeat("k", lock.MaxKeyLen), 1, lock.ErrInvalidKey},
		{"bad\x00name", 1, lock.ErrInvalidKey},
	} {
		if _, err := c.Semaphore(tc.name, tc.n); !errors.Is(err, tc.want) {
			t.Errorf("Semaphore(%.10q, %d) = %v, want an error matching %v", tc.name, tc.n, err, tc.want)
		}
	}
	if _, err := c.Semaphore("s", 2, lock.WithTTL(time.Nanosecond)); !errors.Is(err, lock.ErrInvalidTTL) {
		t.Errorf("Semaphore with a TTL of 1ns = %v, want an error matching ErrInvalidTTL", err)
	}
}

func TestSemaphore_TryAcquire_refusedWhenFull(t *testing.T) {
	c := openMemory(t, memory.New())
	s := mustSemaphore(t, c, "pool", 3)
	ctx := context.Background()
	var permits []*lock.Lock
	keys := map[string]bool{}
	for range 3 {
		l := mustPermit(t, s)
		permits = append(permits, l)
		keys[l.Key()] = true
	}
	if len(keys) != 3 {
		t.Fatalf("three permits on %d slots, want 3: %v", len(keys), keys)
	}
	if _, err := s.TryAcquire(ctx); !errors.Is(err, lock.ErrNotAcquired) {
		t.Fatalf("TryAcquire with all 3 permits held = %v, want an error matching ErrNotAcquired", err)
	}
	if err := permits[1].Release(ctx); err != nil {
		t.Fatal(err)
	}
	l := mustPermit(t, s)
	if l.Key() != permits[1].Key() {
		t.Errorf("the new permit took slot %q, want the freed one, %q", l.Key(), permits[1].Key())
	}
}

func TestSemaphore_permitsHaveTheirOwnTokens(t *testing.T) {
	c := openMemory(t, memory.New())
	s := mustSemaphore(t, c, "pool", 2)
	ctx := context.Background()
	a := mustPermit(t, s)
	b := mustPermit(t, s)
	ta, _ := a.Token()
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	a2 := mustPermit(t, s)
	t2, fenced := a2.Token()
	if !fenced || a2.Key() != a.Key() || t2 <= ta {
		t.Errorf("the slot's second grant: key %q token %v (fenced %v); want key %q and a token above %v", a2.Key(), t2, fenced, a.Key(), ta)
	}
	if b.Key() == a.Key() {
		t.Errorf("two permits held at once on one slot, %q", a.Key())
	}
}

// TestSemaphore_atMostN runs goroutines over two clients and counts the
// permits held at once, from the moment Acquire returns to Release.
func TestSemaphore_atMostN(t *testing.T) {
	store := memory.New()
	clients := []*lock.Client{openMemory(t, store), openMemory(t, store)}
	const n = 3
	var holding, most atomic.Int32
	var wg sync.WaitGroup
	for g := range 8 {
		s := mustSemaphore(t, clients[g%2], "pool", n, lock.WithRetry(lock.FixedDelay(time.Millisecond)))
		wg.Go(func() {
			for range 30 {
				l, err := s.Acquire(t.Context())
				if err != nil {
					t.Error(err)
					return
				}
				h := holding.Add(1)
				for m := most.Load(); h > m && !most.CompareAndSwap(m, h); m = most.Load() {
				}
				time.Sleep(100 * time.Microsecond)
				holding.Add(-1)
				if err := l.Release(context.Background()); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if m := most.Load(); m > n {
		t.Errorf("%d permits held at once, want at most %d", m, n)
	}
}

func TestSemaphore_sizeMismatchRefused(t *testing.T) {
	store := memory.New()
	a := mustSemaphore(t, openMemory(t, store), "pool", 3)
	b := mustSemaphore(t, openMemory(t, store), "pool", 5)
	held := mustPermit(t, a)
	for range 10 { // b's first slot is random: every one must see a's holder
		_, err := b.TryAcquire(context.Background())
		if !errors.Is(err, lock.ErrSizeMismatch) {
			t.Fatalf("TryAcquire of a semaphore of 5 while one of 3 holds %q = %v, want an error matching ErrSizeMismatch", held.Key(), err)
		}
	}
	// A waiting Acquire does not wait for a mismatch to go away.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := b.Acquire(ctx); !errors.Is(err, lock.ErrSizeMismatch) || ctx.Err() != nil {
		t.Fatalf("Acquire = %v, want an error matching ErrSizeMismatch at once", err)
	}
	// The refused grants were given back: a's size still has its 2 other permits.
	mustPermit(t, a)
	mustPermit(t, a)
	// Once a's permits end, the name takes any size.
	store2 := memory.New()
	a2 := mustSemaphore(t, openMemory(t, store2), "pool", 3)
	l := mustPermit(t, a2)
	l.Release(context.Background())
	mustPermit(t, mustSemaphore(t, openMemory(t, store2), "pool", 5))
}

// TestSemaphore_mixedSizesAtMostTheLargest pins the documented bound for
// clients that disagree on the size: a smaller semaphore does not read
// the slots above its size, so holders of a larger one there are not
// counted, but never more than the larger size hold at once.
func TestSemaphore_mixedSizesAtMostTheLargest(t *testing.T) {
	store := memory.New()
	ctx := context.Background()
	big := mustSemaphore(t, openMemory(t, store), "pool", 5)
	small := mustSemaphore(t, openMemory(t, store), "pool", 3)
	var all, high []*lock.Lock
	for range 5 {
		all = append(all, mustPermit(t, big))
	}
	for _, l := range all {
		if strings.HasSuffix(l.Key(), "\x1f3") || strings.HasSuffix(l.Key(), "\x1f4") {
			high = append(high, l)
			continue
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if len(high) != 2 {
		t.Fatalf("%d permits on slots 3 and 4, want 2", len(high))
	}
	for range 3 {
		mustPermit(t, small)
	}
	if _, err := small.TryAcquire(ctx); !errors.Is(err, lock.ErrNotAcquired) {
		t.Errorf("a fourth permit of the semaphore of 3: %v, want an error matching ErrNotAcquired", err)
	}
	if _, err := big.TryAcquire(ctx); !errors.Is(err, lock.ErrNotAcquired) {
		t.Errorf("a sixth permit of the semaphore of 5: %v, want an error matching ErrNotAcquired", err)
	}
}

// TestSemaphore_mixedSizesRace races clients of sizes 2 and 4 on an empty
// semaphore, over and over, and checks the bound at every grant: holders
// of one size are at most that size, all holders at most 4, and never
// two sizes below slot 2.
func TestSemaphore_mixedSizesRace(t *testing.T) {
	store := memory.New()
	var mu sync.Mutex
	bySize := map[int]int{}
	low := map[int]int{} // holders of each size in slots 0 and 1
	var wg sync.WaitGroup
	for g := range 8 {
		size := 2 + 2*(g%2)
		s := mustSemaphore(t, openMemory(t, store), "race", size)
		wg.Go(func() {
			for range 200 {
				l, err := s.TryAcquire(context.Background())
				if err != nil {
					if !errors.Is(err, lock.ErrNotAcquired) && !errors.Is(err, lock.ErrSizeMismatch) {
						t.Error(err)
						return
					}
					continue
				}
				isLow := strings.HasSuffix(l.Key(), "\x1f0") || strings.HasSuffix(l.Key(), "\x1f1")
				mu.Lock()
				bySize[size]++
				if isLow {
					low[size]++
				}
				if bySize[size] > size || bySize[2]+bySize[4] > 4 || (low[2] > 0 && low[4] > 0) {
					t.Errorf("holders by size %v, in slots 0 and 1 %v: over the bound", bySize, low)
				}
				mu.Unlock()
				time.Sleep(50 * time.Microsecond)
				mu.Lock()
				bySize[size]--
				if isLow {
					low[size]--
				}
				mu.Unlock()
				l.Release(context.Background())
			}
		})
	}
	wg.Wait()
}

func TestSemaphore_expiryFreesTheSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := openMemory(t, memory.New())
		s := mustSemaphore(t, c, "pool", 1, lock.WithTTL(time.Second))
		l := mustPermit(t, s) // its holder vanishes
		if _, err := s.TryAcquire(t.Context()); !errors.Is(err, lock.ErrNotAcquired) {
			t.Fatalf("TryAcquire while the permit is held = %v, want ErrNotAcquired", err)
		}
		<-l.Done()
		time.Sleep(driftAllowance(time.Second)) // the backend's lease outlasts the validity by that
		l2 := mustPermit(t, s)
		if l2.Key() != l.Key() {
			t.Errorf("the new permit is on %q, want the expired one's slot %q", l2.Key(), l.Key())
		}
	})
}

// driftAllowance is what a lock's validity lacks of its TTL.
func driftAllowance(ttl time.Duration) time.Duration { return driftOf(ttl, lock.DefaultDriftFactor) }

func TestSemaphore_Acquire_wakesAtRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		holder := mustSemaphore(t, openMemory(t, store), "pool", 2)
		waiter := mustSemaphore(t, openMemory(t, store), "pool", 2, lock.WithRetry(lock.FixedDelay(time.Hour)))
		a, b := mustPermit(t, holder), mustPermit(t, holder)
		got := make(chan *lock.Lock)
		go func() {
			l, err := waiter.Acquire(t.Context())
			if err != nil {
				t.Error(err)
			}
			got <- l
		}()
		time.Sleep(time.Second)
		synctest.Wait()
		start := time.Now()
		if err := b.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
		l := <-got
		if d := time.Since(start); d != 0 {
			t.Errorf("the waiter got its permit %v after the release, want at once", d)
		}
		if l != nil && l.Key() != b.Key() {
			t.Errorf("the waiter's permit is on %q, want the released slot %q", l.Key(), b.Key())
		}
		a.Release(context.Background())
	})
}

// TestSemaphore_Acquire_firstComeFirstServed queues three calls of one
// client behind a full semaphore and checks they are served in order.
func TestSemaphore_Acquire_firstComeFirstServed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		other := mustSemaphore(t, openMemory(t, store), "pool", 1)
		c := openMemory(t, store)
		held := mustPermit(t, other)
		order := make(chan int, 3)
		var wg sync.WaitGroup
		for i := range 3 {
			s := mustSemaphore(t, c, "pool", 1, lock.WithRetry(lock.FixedDelay(time.Millisecond)))
			wg.Go(func() {
				l, err := s.Acquire(t.Context())
				if err != nil {
					t.Error(err)
					return
				}
				order <- i
				time.Sleep(time.Millisecond)
				l.Release(context.Background())
			})
			synctest.Wait() // the next call arrives after this one queued
		}
		time.Sleep(10 * time.Millisecond)
		held.Release(context.Background())
		wg.Wait()
		close(order)
		want := 0
		for i := range order {
			if i != want {
				t.Errorf("call %d served in place %d", i, want)
			}
			want++
		}
	})
}

func TestSemaphore_Acquire_cancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := openMemory(t, memory.New())
		s := mustSemaphore(t, c, "pool", 1)
		mustPermit(t, s)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err := s.Acquire(ctx)
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, lock.ErrNotAcquired) {
			t.Errorf("Acquire cancelled while full = %v, want an error matching DeadlineExceeded and ErrNotAcquired", err)
		}
		// A call waiting in line behind another gives up too.
		s2 := mustSemaphore(t, c, "pool", 1, lock.WithRetry(lock.FixedDelay(time.Hour)))
		go s2.Acquire(ctx) //nolint:errcheck // it ends with ctx
		synctest.Wait()
		ctx2, cancel2 := context.WithTimeout(t.Context(), time.Second)
		defer cancel2()
		if _, err := s2.Acquire(ctx2); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Acquire behind another = %v, want an error matching DeadlineExceeded", err)
		}
	})
}

func TestSemaphore_Do_carriesThePermit(t *testing.T) {
	c := openMemory(t, memory.New())
	s := mustSemaphore(t, c, "pool", 2)
	var key string
	err := s.Do(context.Background(), func(ctx context.Context) error {
		l := lock.FromContext(ctx)
		if l == nil {
			return errors.New("no permit in the function's context")
		}
		key = l.Key()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(key, "pool\x1fsem\x1f") {
		t.Errorf("the permit's key is %q, want one of pool's slots", key)
	}
	hs, err := s.Holders(context.Background())
	if err != nil || len(hs) != 0 {
		t.Errorf("Holders after Do = %v, %v; want none: Do releases its permit", hs, err)
	}
}

func TestSemaphore_Holders(t *testing.T) {
	c := openMemory(t, memory.New())
	s := mustSemaphore(t, c, "pool", 3)
	l := mustPermit(t, s)
	hs, err := s.Holders(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 1 || hs[0].ID != l.ID() || hs[0].Size != 3 || !strings.HasSuffix(l.Key(), "\x1f"+string(rune('0'+hs[0].Slot))) {
		t.Errorf("Holders = %+v, want one of size 3 with ID %s on the slot of %q", hs, l.ID(), l.Key())
	}
}

func TestSemaphore_closeEndsWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		mustPermit(t, mustSemaphore(t, openMemory(t, store), "pool", 1))
		c := lock.OpenConnector(store)
		s := mustSemaphore(t, c, "pool", 1, lock.WithRetry(lock.FixedDelay(time.Hour)))
		errc := make(chan error)
		go func() {
			_, err := s.Acquire(t.Context())
			errc <- err
		}()
		synctest.Wait()
		c.Close()
		if err := <-errc; !errors.Is(err, lock.ErrClosed) {
			t.Errorf("Acquire when its client closed = %v, want an error matching ErrClosed", err)
		}
	})
}

func ExampleClient_Semaphore() {
	ctx := context.Background()
	c, err := lock.Open("memory", "example-semaphore")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// At most 2 holders of "api" at once, across every client of the store.
	s, err := c.Semaphore("api", 2, lock.WithTTL(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	a, _ := s.Acquire(ctx)
	b, _ := s.Acquire(ctx)
	_, err = s.TryAcquire(ctx)
	fmt.Println("third permit refused:", errors.Is(err, lock.ErrNotAcquired))

	// Each permit is a *Lock on its own slot: release it, keep it alive,
	// or pass its token, with its key, to a guard.
	a.Release(ctx)
	c2, err := s.TryAcquire(ctx)
	fmt.Println("after a release:", err == nil)

	// A client that asks for another size is refused while permits are held.
	other, _ := c.Semaphore("api", 5)
	_, err = other.TryAcquire(ctx)
	fmt.Println("size 5 refused:", errors.Is(err, lock.ErrSizeMismatch))

	hs, _ := s.Holders(ctx)
	fmt.Println("holders:", len(hs), "of size", hs[0].Size)
	b.Release(ctx)
	c2.Release(ctx)
	// Output:
	// third permit refused: true
	// after a release: true
	// size 5 refused: true
	// holders: 2 of size 2
}
