// Package conformance is the test suite every lock driver passes: the
// promises of package lock, checked through the portable API against a real
// backend.
//
// A driver's test hands [Run] a [Harness]: a factory of clients that all
// share one backend, and the driver's answers about its optional
// capabilities. Every case works on keys of its own, so a backend can be
// shared with other tests; cases run in parallel.
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, conformance.Harness{
//			NewClient: func(t *testing.T) *lock.Client {
//				c, err := lock.Open("mydriver", dsn)
//				if err != nil {
//					t.Fatal(err)
//				}
//				return c
//			},
//			Fencing: true,
//			Extend:  true,
//			Wakeups: true,
//		})
//	}
//
// The suite is itself tested against deliberately broken drivers, to show
// that each of its checks can fail.
package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
)

// Harness is what a driver hands to [Run].
type Harness struct {
	// NewClient opens a new client on the backend under test. All clients
	// of one Run must share one backend, so that they contend with each
	// other. The suite closes the clients it is given. It must be safe to
	// call from parallel tests.
	NewClient func(t *testing.T) *lock.Client

	// Fencing says the driver issues fencing tokens.
	Fencing bool

	// Extend says the driver can extend leases.
	Extend bool

	// Wakeups says the driver announces releases, so that a waiter wakes
	// as soon as the key it waits for is released.
	Wakeups bool

	// TTL is the short lease the suite uses where it waits for expiry. It
	// must be well above the backend's round trip; zero means 250ms.
	TTL time.Duration

	// NewConn, if set, opens a raw driver connection to the same backend,
	// which the suite closes. It lets the suite check the promises that the
	// core's own checks hide from the portable API: that the driver refuses
	// to extend a lease for a value that does not hold it, and never revives
	// an expired lease.
	NewConn func(t *testing.T) driver.Conn

	// Faults, if set, lets the suite kill, hang and restart the nodes of a
	// quorum driver's backend, and adds the fault cases: a broken minority
	// must neither stop nor slow down acquire and release; a broken majority
	// must make attempts fail within Harness.TTL with an error that does not
	// match lock.ErrNotAcquired, leaving nothing held on the other nodes.
	Faults Faults
}

// Run runs the conformance suite as subtests of t.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.NewClient == nil {
		t.Fatal("conformance: Harness.NewClient is nil")
	}
	if h.TTL == 0 {
		h.TTL = 250 * time.Millisecond
	}
	s := &suite{h: h}
	// Fault cases break the shared backend: they run first, one at a time,
	// while the parallel cases wait for Run to return.
	for _, c := range s.faultCases() {
		t.Run(c.name, c.run)
	}
	cases := []testCase{
		{"AcquireRelease", s.acquireRelease},
		{"TryAcquire_held", s.tryAcquireHeld},
		{"Release_notOwner", s.releaseNotOwner},
		{"Extend_notOwner", s.extendNotOwner},
		{"Expiry_vanishedHolder", s.expiry},
		{"Extend_keepsLock", s.extendKeeps},
		{"Extend_afterExpiry", s.extendAfterExpiry},
		{"Acquire_waitsForRelease", s.acquireWaits},
		{"Acquire_cancelled", s.acquireCancelled},
		{"Do_releases", s.doReleases},
		{"Do_extends", s.doExtends},
		{"Do_cancelsOnLoss", s.doCancelsOnLoss},
		{"BadInput", s.badInput},
		{"Keys_areOpaque", s.keysOpaque},
		{"Tokens_increase", s.tokensIncrease},
		{"Contention_oneKey", s.contentionOneKey},
		{"Contention_manyKeys", s.contentionManyKeys},
		{"Stats", s.stats},
		{"Close", s.close},
		{"Driver_ownership", s.driverOwnership},
		{"Driver_noRevival", s.driverNoRevival},
		{"Driver_transfer", s.driverTransfer},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t)
		})
	}
}

type suite struct{ h Harness }

type testCase struct {
	name string
	run  func(*testing.T)
}

// timeout bounds every wait of a case, so that a broken driver fails a case
// instead of hanging the suite.
const timeout = 20 * time.Second

// limit bounds each case: timeout, or 40 TTLs for a backend slow enough to
// need a long TTL.
func (s *suite) limit() time.Duration { return max(timeout, 40*s.h.TTL) }

// client returns a new client that is closed when the test ends.
func (s *suite) client(t *testing.T) *lock.Client {
	t.Helper()
	c := s.h.NewClient(t)
	if c == nil {
		t.Fatal("conformance: Harness.NewClient returned nil")
	}
	t.Cleanup(func() { c.Close() })
	c.SetLogger(slog.New(slog.NewTextHandler(t.Output(), nil)))
	// Connect now, so that no case's timing includes a first connection.
	// This is a readiness check, not a test: a loaded machine may need a
	// few tries.
	ctx, cancel := context.WithTimeout(t.Context(), s.limit())
	defer cancel()
	for {
		err := c.Ping(ctx)
		if err == nil {
			return c
		}
		if ctx.Err() != nil {
			t.Fatalf("Ping of a new client: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// key returns a key no other test uses, even on a shared backend.
func key(t *testing.T, suffix string) string {
	var b [6]byte
	rand.Read(b[:])
	return "conformance/" + hex.EncodeToString(b[:]) + "/" + t.Name() + suffix
}

func (s *suite) ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), s.limit())
	t.Cleanup(cancel)
	return ctx
}

func mustAcquire(t *testing.T, ctx context.Context, c *lock.Client, key string, opts ...lock.Option) *lock.Lock {
	t.Helper()
	l, err := c.TryAcquire(ctx, key, opts...)
	if err != nil {
		t.Fatalf("TryAcquire(%q): %v", key, err)
	}
	return l
}

// assertHeld checks that key cannot be taken through c.
func assertHeld(t *testing.T, ctx context.Context, c *lock.Client, key, why string) {
	t.Helper()
	l, err := c.TryAcquire(ctx, key)
	if err == nil {
		l.Release(ctx)
		t.Fatalf("TryAcquire(%q) succeeded, but the key should be held: %s", key, why)
	}
	if !errors.Is(err, lock.ErrNotAcquired) {
		t.Fatalf("TryAcquire(%q) = %v, want an error matching ErrNotAcquired (%s)", key, err, why)
	}
}

// assertFree checks that key can be taken through c, and gives it back.
func assertFree(t *testing.T, ctx context.Context, c *lock.Client, key, why string) {
	t.Helper()
	l, err := c.TryAcquire(ctx, key)
	if err != nil {
		t.Fatalf("TryAcquire(%q) = %v, but the key should be free: %s", key, err, why)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatalf("Release(%q): %v", key, err)
	}
}

func (s *suite) acquireRelease(t *testing.T) {
	ctx := s.ctxFor(t)
	c := s.client(t)
	k := key(t, "")
	const ttl = 10 * time.Second
	before := time.Now()
	l, err := c.Acquire(ctx, k, lock.WithTTL(ttl))
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	after := time.Now()
	if l.Key() != k {
		t.Errorf("Key() = %q, want %q", l.Key(), k)
	}
	// The core's clock reading comes after connecting, so only the time
	// Acquire returned bounds it from above.
	if vu := l.ValidUntil(); !vu.After(after) || vu.After(after.Add(ttl)) {
		t.Errorf("ValidUntil() is %v after Acquire returned (which took %v); want in (0, %v]", vu.Sub(after), after.Sub(before), ttl)
	}
	tok, fenced := l.Token()
	if fenced != s.h.Fencing {
		t.Errorf("Token() fenced = %v, want %v (Harness.Fencing)", fenced, s.h.Fencing)
	}
	if fenced && tok.IsZero() {
		t.Errorf("Token() = 0, a token that is never issued")
	}
	if err := l.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if vu := l.ValidUntil(); vu.After(time.Now()) {
		t.Errorf("ValidUntil() is in the future after Release")
	}
	if err := l.Release(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("second Release = %v, want an error matching ErrNotHeld", err)
	}
	assertFree(t, ctx, s.client(t), k, "it was released")
}

func (s *suite) tryAcquireHeld(t *testing.T) {
	ctx := s.ctxFor(t)
	a, b := s.client(t), s.client(t)
	k := key(t, "")
	l := mustAcquire(t, ctx, a, k)
	assertHeld(t, ctx, b, k, "another client holds it")
	assertHeld(t, ctx, a, k, "a lock is not reentrant: the same client holds it")
	if err := l.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	assertFree(t, ctx, b, k, "its holder released it")
}

// staleHandle returns a lock handle whose lease has run out, and a live
// lock on the same key held through another client.
func (s *suite) staleHandle(t *testing.T, ctx context.Context, k string) (stale, live *lock.Lock, liveClient *lock.Client) {
	t.Helper()
	a, b := s.client(t), s.client(t)
	stale = mustAcquire(t, ctx, a, k, lock.WithTTL(s.h.TTL))
	live, err := b.Acquire(ctx, k, lock.WithTTL(s.h.TTL), lock.WithRetry(lock.FixedDelay(s.h.TTL/10)))
	if err != nil {
		t.Fatalf("Acquire after the first holder's lease ran out: %v", err)
	}
	return stale, live, b
}

func (s *suite) releaseNotOwner(t *testing.T) {
	ctx := s.ctxFor(t)
	k := key(t, "")
	stale, live, _ := s.staleHandle(t, ctx, k)
	if err := stale.Release(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Release by a former holder = %v, want an error matching ErrNotHeld", err)
	}
	assertHeld(t, ctx, s.client(t), k, "a former holder's Release must not free the current holder's lock")
	if err := live.Release(ctx); err != nil {
		t.Errorf("Release by the holder after a former holder's attempt: %v", err)
	}
}

func (s *suite) extendNotOwner(t *testing.T) {
	if !s.h.Extend {
		t.Skip("the driver cannot extend leases")
	}
	ctx := s.ctxFor(t)
	k := key(t, "")
	stale, live, _ := s.staleHandle(t, ctx, k)
	if err := stale.Extend(ctx, time.Hour); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Extend by a former holder = %v, want an error matching ErrNotHeld", err)
	}
	// The live lock must still expire on its own schedule.
	other := s.client(t)
	deadline := live.ValidUntil().Add(s.h.TTL * 4)
	for {
		l, err := other.TryAcquire(ctx, k)
		if err == nil {
			l.Release(ctx)
			return
		}
		if !errors.Is(err, lock.ErrNotAcquired) {
			t.Fatalf("TryAcquire: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the holder's lock outlived its TTL: a former holder's Extend extended it")
		}
		time.Sleep(s.h.TTL / 10)
	}
}

func (s *suite) expiry(t *testing.T) {
	ctx := s.ctxFor(t)
	a, b := s.client(t), s.client(t)
	k := key(t, "")
	l := mustAcquire(t, ctx, a, k, lock.WithTTL(s.h.TTL))
	assertHeld(t, ctx, b, k, "its holder has just taken it")
	// a vanishes: it neither releases nor extends.
	wctx, cancel := context.WithTimeout(ctx, s.h.TTL*8)
	defer cancel()
	l2, err := b.Acquire(wctx, k, lock.WithRetry(lock.FixedDelay(s.h.TTL/10)))
	got := time.Now()
	if err != nil {
		t.Fatalf("Acquire of a vanished holder's key after %v (its TTL is %v): %v", s.h.TTL*8, s.h.TTL, err)
	}
	defer l2.Release(ctx)
	if got.Before(l.ValidUntil()) {
		t.Fatalf("the key was taken %v before its first holder's validity ran out", l.ValidUntil().Sub(got))
	}
}

func (s *suite) extendKeeps(t *testing.T) {
	ctx := s.ctxFor(t)
	c := s.client(t)
	k := key(t, "")
	l := mustAcquire(t, ctx, c, k, lock.WithTTL(s.h.TTL))
	if !s.h.Extend {
		if err := l.Extend(ctx, s.h.TTL); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("Extend on a driver that cannot extend = %v, want an error matching errors.ErrUnsupported", err)
		}
		return
	}
	first := l.ValidUntil()
	other := s.client(t)
	for i := 0; i < 4; i++ {
		time.Sleep(s.h.TTL / 3)
		if err := l.Extend(ctx, s.h.TTL); err != nil {
			t.Fatalf("Extend #%d: %v", i+1, err)
		}
	}
	if !l.ValidUntil().After(first) {
		t.Fatalf("ValidUntil did not move forward after Extend")
	}
	if !time.Now().After(first) {
		t.Fatalf("test too slow to tell: the first lease has not run out yet")
	}
	assertHeld(t, ctx, other, k, "its lease was extended past the first TTL")
	if err := l.Release(ctx); err != nil {
		t.Fatalf("Release after Extend: %v", err)
	}
	assertFree(t, ctx, other, k, "it was released")
}

func (s *suite) extendAfterExpiry(t *testing.T) {
	if !s.h.Extend {
		t.Skip("the driver cannot extend leases")
	}
	ctx := s.ctxFor(t)
	c := s.client(t)
	k := key(t, "")
	l := mustAcquire(t, ctx, c, k, lock.WithTTL(s.h.TTL))
	time.Sleep(time.Until(l.ValidUntil()) + s.h.TTL/2)
	if err := l.Extend(ctx, time.Hour); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("Extend after the lease ran out = %v, want an error matching ErrNotHeld", err)
	}
	// An expired lease is never revived.
	other := s.client(t)
	l2, err := other.Acquire(ctx, k, lock.WithRetry(lock.FixedDelay(s.h.TTL/10)))
	if err != nil {
		t.Fatalf("Acquire after a refused Extend: %v", err)
	}
	l2.Release(ctx)
}

func (s *suite) acquireWaits(t *testing.T) {
	ctx := s.ctxFor(t)
	a, b := s.client(t), s.client(t)
	k := key(t, "")
	l := mustAcquire(t, ctx, a, k, lock.WithTTL(time.Minute))
	hold := s.h.TTL / 2
	// With wake-ups, a waiter must not need to poll: make polls rare.
	poll := lock.FixedDelay(s.h.TTL / 10)
	if s.h.Wakeups {
		poll = lock.FixedDelay(time.Minute)
	}
	released := make(chan time.Time, 1)
	releaseErr := make(chan error, 1)
	go func() {
		time.Sleep(hold)
		released <- time.Now()
		releaseErr <- l.Release(ctx)
	}()
	l2, err := b.Acquire(ctx, k, lock.WithRetry(poll))
	got := time.Now()
	if err != nil {
		rerr := errors.New("not returned yet")
		select {
		case rerr = <-releaseErr:
		default:
		}
		t.Fatalf("Acquire while another holder releases after %v: %v (the holder's Release: %v)", hold, err, rerr)
	}
	defer l2.Release(ctx)
	rel := <-released
	if got.Before(rel) {
		t.Fatalf("Acquire succeeded %v before the holder released", rel.Sub(got))
	}
	if s.h.Wakeups {
		if wait := got.Sub(rel); wait > s.h.TTL*4 {
			t.Fatalf("waiter woke %v after the release (its poll interval is a minute): releases are not announced", wait)
		}
	}
}

func (s *suite) acquireCancelled(t *testing.T) {
	ctx := s.ctxFor(t)
	a, b := s.client(t), s.client(t)
	k := key(t, "")
	l := mustAcquire(t, ctx, a, k, lock.WithTTL(time.Minute))

	// Cancel the wait once the first attempt has found the key held (as
	// b's stats show), however long a slow backend took for it.
	wctx, cancel := context.WithCancel(ctx)
	cancelled := make(chan time.Time, 1)
	go func() {
		for b.Stats().Contended == 0 && wctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		cancelled <- time.Now()
		cancel()
	}()
	_, err := b.Acquire(wctx, k, lock.WithRetry(lock.FixedDelay(time.Minute)))
	returned := time.Now()
	cancel() // ends the goroutine, should Acquire have returned on its own
	if !errors.Is(err, context.Canceled) || !errors.Is(err, lock.ErrNotAcquired) {
		t.Errorf("cancelled Acquire = %v, want an error matching context.Canceled and ErrNotAcquired", err)
	}
	if took := returned.Sub(<-cancelled); took > 2*time.Second {
		t.Errorf("cancelled Acquire took %v to return after its context was cancelled", took)
	}

	// An acquisition whose context is already done makes no attempt.
	done, cancelDone := context.WithCancel(ctx)
	cancelDone()
	k2 := key(t, "/2")
	if _, err := b.Acquire(done, k2); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire with a cancelled context = %v, want an error matching context.Canceled", err)
	}

	if err := l.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	assertFree(t, ctx, s.client(t), k, "the cancelled waiter must not leave it held")
	assertFree(t, ctx, s.client(t), k2, "an acquisition with a cancelled context must not take it")
}

func (s *suite) doReleases(t *testing.T) {
	ctx := s.ctxFor(t)
	c := s.client(t)
	k := key(t, "")
	other := s.client(t)
	boom := errors.New("boom")
	ran := false
	err := c.Do(ctx, k, func(fctx context.Context) error {
		ran = true
		l := lock.FromContext(fctx)
		if l == nil || l.Key() != k {
			t.Errorf("FromContext in Do's function = %v, want the lock on %q", l, k)
		}
		assertHeld(t, ctx, other, k, "Do's function is running")
		return boom
	})
	if !ran {
		t.Fatal("Do did not run its function")
	}
	if !errors.Is(err, boom) {
		t.Errorf("Do = %v, want the function's error", err)
	}
	assertFree(t, ctx, other, k, "Do has returned")
}

func (s *suite) doExtends(t *testing.T) {
	if !s.h.Extend {
		t.Skip("the driver cannot extend leases")
	}
	ctx := s.ctxFor(t)
	c, other := s.client(t), s.client(t)
	k := key(t, "")
	err := c.Do(ctx, k, func(fctx context.Context) error {
		end := time.Now().Add(3 * s.h.TTL)
		for time.Now().Before(end) {
			select {
			case <-fctx.Done():
				t.Errorf("Do cancelled its function while extension should have kept the lock: %v", context.Cause(fctx))
				return nil
			case <-time.After(s.h.TTL / 4):
			}
			assertHeld(t, ctx, other, k, "Do keeps extending it")
		}
		return nil
	}, lock.WithTTL(s.h.TTL))
	if err != nil {
		t.Errorf("Do: %v", err)
	}
	assertFree(t, ctx, other, k, "Do has returned")
}

func (s *suite) doCancelsOnLoss(t *testing.T) {
	ctx := s.ctxFor(t)
	c := s.client(t)
	k := key(t, "")
	start := time.Now()
	err := c.Do(ctx, k, func(fctx context.Context) error {
		if s.h.Extend {
			// Lose the lock behind the keeper's back: its next extension
			// is refused.
			if err := lock.FromContext(fctx).Release(ctx); err != nil {
				t.Errorf("Release inside Do: %v", err)
			}
		}
		select {
		case <-fctx.Done():
		case <-time.After(s.h.TTL * 8):
			t.Errorf("Do did not cancel its function %v after the lock was lost", s.h.TTL*8)
			return nil
		}
		if cause := context.Cause(fctx); !errors.Is(cause, lock.ErrLost) {
			t.Errorf("cause of the function's context = %v, want an error matching ErrLost", cause)
		}
		return nil
	}, lock.WithTTL(s.h.TTL))
	if !errors.Is(err, lock.ErrLost) {
		t.Errorf("Do after the lock was lost = %v, want an error matching ErrLost", err)
	}
	if took := time.Since(start); took > s.h.TTL*4 {
		t.Errorf("Do noticed the loss only after %v (TTL %v)", took, s.h.TTL)
	}
}

func (s *suite) badInput(t *testing.T) {
	ctx := s.ctxFor(t)
	c := s.client(t)
	k := key(t, "")
	nop := func(context.Context) error { return nil }
	cases := []struct {
		name string
		key  string
		opts []lock.Option
		want error
	}{
		{"emptyKey", "", nil, lock.ErrInvalidKey},
		{"longKey", strings.Repeat("k", lock.MaxKeyLen+1), nil, lock.ErrInvalidKey},
		{"hugeKey", strings.Repeat("k", 10<<20), nil, lock.ErrInvalidKey},
		{"invalidUTF8", "k\xff", nil, lock.ErrInvalidKey},
		{"nulInKey", "k\x00", nil, lock.ErrInvalidKey},
		{"zeroTTL", k, []lock.Option{lock.WithTTL(0)}, lock.ErrInvalidTTL},
		{"negativeTTL", k, []lock.Option{lock.WithTTL(-time.Second)}, lock.ErrInvalidTTL},
		{"tinyTTL", k, []lock.Option{lock.WithTTL(time.Millisecond)}, lock.ErrInvalidTTL},
		{"hugeTTL", k, []lock.Option{lock.WithTTL(math.MaxInt64)}, lock.ErrInvalidTTL},
		{"nilOption", k, []lock.Option{nil}, lock.ErrInvalidOption},
		{"nilRetry", k, []lock.Option{lock.WithRetry(nil)}, lock.ErrInvalidOption},
		{"zeroDelay", k, []lock.Option{lock.WithRetry(lock.FixedDelay(0))}, lock.ErrInvalidOption},
		{"backwardBackoff", k, []lock.Option{lock.WithRetry(lock.ExponentialBackoff(time.Second, time.Millisecond))}, lock.ErrInvalidOption},
		{"zeroAttempts", k, []lock.Option{lock.WithRetry(lock.LimitAttempts(lock.NoRetry(), 0))}, lock.ErrInvalidOption},
		{"hugeDrift", k, []lock.Option{lock.WithDriftFactor(0.5)}, lock.ErrInvalidOption},
		{"nanDrift", k, []lock.Option{lock.WithDriftFactor(math.NaN())}, lock.ErrInvalidOption},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.TryAcquire(ctx, tc.key, tc.opts...); !errors.Is(err, tc.want) {
				t.Errorf("TryAcquire = %v, want an error matching %v", err, tc.want)
			}
			if _, err := c.Acquire(ctx, tc.key, tc.opts...); !errors.Is(err, tc.want) {
				t.Errorf("Acquire = %v, want an error matching %v", err, tc.want)
			}
			if err := c.Do(ctx, tc.key, nop, tc.opts...); !errors.Is(err, tc.want) {
				t.Errorf("Do = %v, want an error matching %v", err, tc.want)
			}
			if len(tc.key) > 1000 {
				_, err := c.TryAcquire(ctx, tc.key, tc.opts...)
				if n := len(err.Error()); n > 1000 {
					t.Errorf("the error for a %d-byte key is %d bytes long; it should not repeat the key", len(tc.key), n)
				}
			}
		})
	}
	if err := c.Do(ctx, k, nil); !errors.Is(err, lock.ErrInvalidOption) {
		t.Errorf("Do with a nil function = %v, want an error matching ErrInvalidOption", err)
	}
	assertFree(t, ctx, c, k, "only bad calls were made")

	l := mustAcquire(t, ctx, c, k)
	for _, ttl := range []time.Duration{0, -1, time.Millisecond, math.MaxInt64} {
		if err := l.Extend(ctx, ttl); !errors.Is(err, lock.ErrInvalidTTL) {
			t.Errorf("Extend(%v) = %v, want an error matching ErrInvalidTTL", ttl, err)
		}
	}
	if err := l.Release(ctx); err != nil {
		t.Errorf("Release after refused Extends: %v", err)
	}
}

func (s *suite) keysOpaque(t *testing.T) {
	ctx := s.ctxFor(t)
	a, b := s.client(t), s.client(t)
	base := key(t, "/")
	suffixes := []string{
		"a", "A", "a*", "a?", "[a]", "a'b", `a"b`, "a;--", "a' OR '1'='1", "a%", "a_", `a\`,
		"a b", "a\nb", "a\tb", "ключ", "鍵", "🔒", "a{b}", "$a", "a.b", "a:b",
		strings.Repeat("x", lock.MaxKeyLen-len(base)),
	}
	var held []*lock.Lock
	for _, sfx := range suffixes {
		l, err := a.TryAcquire(ctx, base+sfx)
		if err != nil {
			t.Fatalf("TryAcquire(%q): %v (every key here is distinct)", base+sfx, err)
		}
		held = append(held, l)
	}
	for _, sfx := range suffixes {
		assertHeld(t, ctx, b, base+sfx, "it was just taken")
	}
	assertFree(t, ctx, b, base+"a-", "no such key was taken")
	assertFree(t, ctx, b, base, "no such key was taken")
	for _, l := range held {
		if err := l.Release(ctx); err != nil {
			t.Errorf("Release(%q): %v", l.Key(), err)
		}
	}
	for _, sfx := range suffixes {
		assertFree(t, ctx, b, base+sfx, "it was released")
	}
}

func (s *suite) tokensIncrease(t *testing.T) {
	if !s.h.Fencing {
		t.Skip("the driver issues no fencing tokens")
	}
	ctx := s.ctxFor(t)
	clients := []*lock.Client{s.client(t), s.client(t), s.client(t)}
	k, k2 := key(t, ""), key(t, "/2")
	var last uint64
	for i := 0; i < 12; i++ {
		c := clients[i%len(clients)]
		// Interleave another key: its acquisitions must not matter.
		l2 := mustAcquire(t, ctx, c, k2)
		l := mustAcquire(t, ctx, c, k)
		tok, ok := l.Token()
		if !ok {
			t.Fatal("Token() reports no token from a fenced driver")
		}
		if uint64(tok) <= last {
			t.Fatalf("acquisition #%d got token %v after token %d", i+1, tok, last)
		}
		last = uint64(tok)
		if i%3 == 2 {
			// Let it expire instead of releasing it.
			l.Extend(ctx, lock.MinTTL)
			time.Sleep(2 * lock.MinTTL)
			l.Release(ctx)
		} else if err := l.Release(ctx); err != nil {
			t.Fatalf("Release: %v", err)
		}
		l2.Release(ctx)
	}
}

// contend runs goroutines over clients, each acquiring keys in turn n times
// and holding each for hold, and checks the history.
func (s *suite) contend(t *testing.T, keys []string, goroutines, n int) {
	ctx := s.ctxFor(t)
	clients := []*lock.Client{s.client(t), s.client(t), s.client(t), s.client(t)}
	var h History
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clients[g%len(clients)]
			for i := 0; i < n; i++ {
				k := keys[(g+i)%len(keys)]
				l, err := c.Acquire(ctx, k, lock.WithTTL(10*time.Second), lock.WithRetry(lock.ExponentialBackoff(time.Millisecond, 20*time.Millisecond)))
				if err != nil {
					errs <- err
					return
				}
				got := time.Now()
				time.Sleep(time.Duration(i%3) * 100 * time.Microsecond)
				h.Hold(l, got)
				if err := l.Release(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("contender: %v", err)
	}
	if err := h.Check(s.h.Fencing); err != nil {
		t.Error(err)
	}
	if want := goroutines * n; h.Len() != want && !t.Failed() {
		t.Errorf("%d holdings recorded, want %d", h.Len(), want)
	}
}

func (s *suite) contentionOneKey(t *testing.T) {
	s.contend(t, []string{key(t, "")}, 8, 25)
}

func (s *suite) contentionManyKeys(t *testing.T) {
	keys := make([]string, 5)
	for i := range keys {
		keys[i] = key(t, "/"+string(rune('a'+i)))
	}
	s.contend(t, keys, 10, 25)
}

func (s *suite) stats(t *testing.T) {
	ctx := s.ctxFor(t)
	c, other := s.client(t), s.client(t)
	k := key(t, "")
	l := mustAcquire(t, ctx, c, k)
	if _, err := c.TryAcquire(ctx, k); !errors.Is(err, lock.ErrNotAcquired) {
		t.Fatalf("TryAcquire of a held key = %v, want an error matching ErrNotAcquired", err)
	}
	if s.h.Extend {
		if err := l.Extend(ctx, time.Minute); err != nil {
			t.Fatalf("Extend: %v", err)
		}
	}
	if err := l.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	want := lock.Stats{Acquired: 1, Contended: 1, Released: 1}
	if s.h.Extend {
		want.Extended = 1
	}
	if got := c.Stats(); got != want {
		t.Errorf("Stats() = %+v, want %+v", got, want)
	}
	if got := other.Stats(); got != (lock.Stats{}) {
		t.Errorf("Stats() of an unused client = %+v, want zero", got)
	}
	if err := c.Ping(ctx); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

func (s *suite) close(t *testing.T) {
	ctx := s.ctxFor(t)
	c := s.client(t)
	k := key(t, "")
	l := mustAcquire(t, ctx, c, k)
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	if _, err := c.TryAcquire(ctx, k); !errors.Is(err, lock.ErrClosed) {
		t.Errorf("TryAcquire after Close = %v, want an error matching ErrClosed", err)
	}
	if _, err := c.Acquire(ctx, k); !errors.Is(err, lock.ErrClosed) {
		t.Errorf("Acquire after Close = %v, want an error matching ErrClosed", err)
	}
	if err := c.Do(ctx, k, func(context.Context) error { return nil }); !errors.Is(err, lock.ErrClosed) {
		t.Errorf("Do after Close = %v, want an error matching ErrClosed", err)
	}
	if err := c.Ping(ctx); !errors.Is(err, lock.ErrClosed) {
		t.Errorf("Ping after Close = %v, want an error matching ErrClosed", err)
	}
	if err := l.Release(ctx); !errors.Is(err, lock.ErrClosed) {
		t.Errorf("Release after Close = %v, want an error matching ErrClosed", err)
	}
	// Closing a client does not release its locks: they expire.
	assertHeld(t, ctx, s.client(t), k, "its holder closed its client without releasing it")
}

// conn returns a raw driver connection that is closed when the test ends,
// or skips the test if the harness has none.
func (s *suite) conn(t *testing.T) driver.Conn {
	t.Helper()
	if s.h.NewConn == nil {
		t.Skip("the harness gives no raw driver connection (Harness.NewConn)")
	}
	c := s.h.NewConn(t)
	if c == nil {
		t.Fatal("conformance: Harness.NewConn returned nil")
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func (s *suite) driverOwnership(t *testing.T) {
	ctx := s.ctxFor(t)
	c := s.conn(t)
	k := key(t, "")
	if _, err := c.Acquire(ctx, k, "holder", s.h.TTL); err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if _, err := c.Acquire(ctx, k, "other", s.h.TTL); !errors.Is(err, driver.ErrHeld) {
		t.Fatalf("Acquire of a held key = %v, want an error matching driver.ErrHeld", err)
	}
	if err := c.Release(ctx, k, "other"); !errors.Is(err, driver.ErrNotHeld) {
		t.Errorf("Release by a value that does not hold the key = %v, want an error matching driver.ErrNotHeld", err)
	}
	if ext, ok := c.(driver.Extender); ok {
		if err := ext.Extend(ctx, k, "other", time.Hour); !errors.Is(err, driver.ErrNotHeld) {
			t.Errorf("Extend by a value that does not hold the key = %v, want an error matching driver.ErrNotHeld", err)
		}
	}
	if _, err := c.Acquire(ctx, k, "third", s.h.TTL); !errors.Is(err, driver.ErrHeld) {
		t.Fatalf("Acquire after a non-holder's Release = %v, want an error matching driver.ErrHeld", err)
	}
	// The holder's lease must run out on its own schedule, not an hour later.
	deadline := time.Now().Add(s.h.TTL * 8)
	for {
		_, err := c.Acquire(ctx, k, "fourth", s.h.TTL)
		if err == nil {
			break
		}
		if !errors.Is(err, driver.ErrHeld) {
			t.Fatalf("Acquire: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the holder's lease outlived its TTL: a non-holder's Extend extended it")
		}
		time.Sleep(s.h.TTL / 10)
	}
	if err := c.Release(ctx, k, "fourth"); err != nil {
		t.Errorf("Release by the holder: %v", err)
	}
}

func (s *suite) driverNoRevival(t *testing.T) {
	ctx := s.ctxFor(t)
	c := s.conn(t)
	ext, ok := c.(driver.Extender)
	if !ok {
		t.Skip("the driver cannot extend leases")
	}
	k := key(t, "")
	if _, err := c.Acquire(ctx, k, "holder", s.h.TTL); err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	time.Sleep(s.h.TTL * 2)
	if err := ext.Extend(ctx, k, "holder", time.Hour); !errors.Is(err, driver.ErrNotHeld) {
		t.Errorf("Extend of an expired lease = %v, want an error matching driver.ErrNotHeld", err)
	}
	if _, err := c.Acquire(ctx, k, "next", s.h.TTL); err != nil {
		t.Errorf("Acquire after a refused Extend of an expired lease = %v: it was revived", err)
	}
}

func (s *suite) driverTransfer(t *testing.T) {
	ctx := s.ctxFor(t)
	c := s.conn(t)
	tr, ok := c.(driver.Transferer)
	if !ok {
		t.Skip("the driver cannot transfer leases")
	}
	k := key(t, "")
	first, err := c.Acquire(ctx, k, "holder", s.h.TTL)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if _, err := tr.Transfer(ctx, k, "other", "thief", s.h.TTL); !errors.Is(err, driver.ErrNotHeld) {
		t.Errorf("Transfer by a value that does not hold the key = %v, want an error matching driver.ErrNotHeld", err)
	}
	if err := c.Release(ctx, k, "thief"); !errors.Is(err, driver.ErrNotHeld) {
		t.Errorf("a refused Transfer gave the key away: Release by its target = %v, want driver.ErrNotHeld", err)
	}
	second, err := tr.Transfer(ctx, k, "holder", "next", s.h.TTL)
	if err != nil {
		t.Fatalf("Transfer by the holder: %v", err)
	}
	if s.h.Fencing && (!second.Fenced || second.Token <= first.Token) {
		t.Errorf("token after Transfer = %+v, want greater than %+v", second, first)
	}
	if _, err := c.Acquire(ctx, k, "third", s.h.TTL); !errors.Is(err, driver.ErrHeld) {
		t.Errorf("Acquire right after a Transfer = %v, want driver.ErrHeld: the key must never be free in between", err)
	}
	if err := c.Release(ctx, k, "holder"); !errors.Is(err, driver.ErrNotHeld) {
		t.Errorf("Release by the former holder after a Transfer = %v, want driver.ErrNotHeld", err)
	}
	// The new lease expires on its own schedule, and then cannot be
	// transferred.
	time.Sleep(s.h.TTL * 2)
	if _, err := tr.Transfer(ctx, k, "next", "late", time.Hour); !errors.Is(err, driver.ErrNotHeld) {
		t.Errorf("Transfer of an expired lease = %v, want an error matching driver.ErrNotHeld", err)
	}
	third, err := c.Acquire(ctx, k, "fourth", s.h.TTL)
	if err != nil {
		t.Fatalf("Acquire after the transferred lease expired: %v", err)
	}
	if s.h.Fencing && third.Token <= second.Token {
		t.Errorf("token after the transferred lease = %d, want greater than %d", third.Token, second.Token)
	}
	if err := c.Release(ctx, k, "fourth"); err != nil {
		t.Errorf("Release: %v", err)
	}
}
