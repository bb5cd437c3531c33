package lock

// Unit tests of the queue of waiting calls and of a wait's pacing, driven
// without a client or a driver: the test plays the attempts' outcomes.
// testing/synctest makes the waits' timers exact.

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/distlock/lock/driver"
)

var (
	errHeldAttempt = opError("acquire", "k", ErrNotAcquired)
	errDown        = opError("acquire", "k", errors.New("backend down"))
)

// newTestWait returns a wait for key "k" on qs with strategy s.
func newTestWait(qs *queues, s RetryStrategy, waiter driver.Waiter, offers bool) *wait {
	o := defaultOptions()
	o.retry = s
	return qs.newWait("k", &o, waiter, offers, nil, slog.New(slog.DiscardHandler))
}

// awaitAfter runs w.next and reports how long it took (on synctest's
// clock) and its result.
func awaitAfter(t *testing.T, ctx context.Context, w *wait) time.Duration {
	t.Helper()
	start := time.Now()
	l, err := w.next(ctx, nil)
	if l != nil || err != nil {
		t.Fatalf("next = %v, %v; want to be told to attempt", l, err)
	}
	return time.Since(start)
}

// mustGoOn records a failed attempt that should not end the call.
func mustGoOn(t *testing.T, ctx context.Context, w *wait, err error) {
	t.Helper()
	if err := w.failed(ctx, err); err != nil {
		t.Fatalf("failed(%v) = %v; want the call to go on", err, err)
	}
}

// fakeWaiter announces releases on a channel the test controls, and fails
// the first fail subscriptions.
type fakeWaiter struct {
	fail     int
	watches  int
	released chan struct{}
}

func (f *fakeWaiter) Watch(context.Context, string) (driver.Watch, error) {
	if f.watches++; f.watches <= f.fail {
		return nil, errors.New("subscription refused")
	}
	return fakeWatch{f.released}, nil
}

type fakeWatch struct{ c chan struct{} }

func (w fakeWatch) Released() <-chan struct{} { return w.c }
func (fakeWatch) Close() error                { return nil }

func TestWait_firstAttemptAtOnceThenStrategyDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var qs queues
		w := newTestWait(&qs, FixedDelay(time.Second), nil, false)
		defer w.end(nil)
		if d := awaitAfter(t, t.Context(), w); d != 0 {
			t.Errorf("first await took %v, want 0", d)
		}
		mustGoOn(t, t.Context(), w, errHeldAttempt)
		if w.place != first {
			t.Errorf("after a refusal, with nobody else waiting, place = %v; want first (holding the turn)", w.place)
		}
		// FixedDelay jitters in [d/2, d].
		if d := awaitAfter(t, t.Context(), w); d < 500*time.Millisecond || d > time.Second {
			t.Errorf("await after a refusal took %v; want the strategy's delay, in [500ms, 1s]", d)
		}
	})
}

func TestWait_backendFailureAfterWakeUpRetriesSoon(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var qs queues
		fw := &fakeWaiter{released: make(chan struct{}, 1)}
		w := newTestWait(&qs, FixedDelay(time.Minute), fw, false)
		defer w.end(nil)
		awaitAfter(t, t.Context(), w)
		mustGoOn(t, t.Context(), w, errHeldAttempt)
		if w.watch == nil {
			t.Fatal("no subscription after a refusal on a driver that announces releases")
		}
		// Subscribed: try again at once, in case of a release meanwhile.
		if d := awaitAfter(t, t.Context(), w); d != 0 {
			t.Errorf("await right after subscribing took %v, want 0", d)
		}
		mustGoOn(t, t.Context(), w, errHeldAttempt)
		go func() { time.Sleep(3 * time.Second); fw.released <- struct{}{} }()
		if d := awaitAfter(t, t.Context(), w); d != 3*time.Second {
			t.Errorf("await took %v; want it to end at the release, 3s", d)
		}
		// The attempt at the release fails on the backend: 10ms, 20ms, 40ms.
		for _, want := range []time.Duration{10, 20, 40} {
			mustGoOn(t, t.Context(), w, errDown)
			if d := awaitAfter(t, t.Context(), w); d != want*time.Millisecond {
				t.Errorf("await after %d backend failures since a wake-up took %v, want %v", w.failures, d, want*time.Millisecond)
			}
		}
		// A refusal ends the run: back to the strategy's pace.
		mustGoOn(t, t.Context(), w, errHeldAttempt)
		if d := awaitAfter(t, t.Context(), w); d < 30*time.Second {
			t.Errorf("await after a refusal took %v; want the strategy's delay, at least 30s", d)
		}
	})
}

func TestWait_backendFailureWithoutWakeUpKeepsStrategyPace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var qs queues
		w := newTestWait(&qs, FixedDelay(time.Minute), nil, false)
		defer w.end(nil)
		awaitAfter(t, t.Context(), w)
		mustGoOn(t, t.Context(), w, errDown)
		if w.place != outside {
			t.Errorf("after a backend failure, place = %v; want outside the queue", w.place)
		}
		if d := awaitAfter(t, t.Context(), w); d < 30*time.Second {
			t.Errorf("await after a backend failure took %v; want the strategy's delay, at least 30s", d)
		}
	})
}

func TestWait_failedSubscriptionRetriedSoon(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var qs queues
		fw := &fakeWaiter{fail: 2, released: make(chan struct{}, 1)}
		w := newTestWait(&qs, FixedDelay(time.Minute), fw, false)
		defer w.end(nil)
		awaitAfter(t, t.Context(), w)
		for _, want := range []time.Duration{10, 20} {
			mustGoOn(t, t.Context(), w, errHeldAttempt)
			if d := awaitAfter(t, t.Context(), w); d != want*time.Millisecond {
				t.Errorf("await after %d failed subscriptions took %v, want %v", w.unsubscribed, d, want*time.Millisecond)
			}
		}
		mustGoOn(t, t.Context(), w, errHeldAttempt) // the third subscription succeeds
		if w.watch == nil || w.unsubscribed != 0 {
			t.Fatalf("after a successful subscription: watch %v, failures %d", w.watch, w.unsubscribed)
		}
		if d := awaitAfter(t, t.Context(), w); d != 0 {
			t.Errorf("await right after subscribing took %v, want 0", d)
		}
	})
}

func TestWait_contextEndsPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var qs queues
		w := newTestWait(&qs, FixedDelay(time.Minute), nil, false)
		defer w.end(nil)
		awaitAfter(t, t.Context(), w)
		mustGoOn(t, t.Context(), w, errHeldAttempt)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		l, err := w.next(ctx, nil)
		if l != nil || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrNotAcquired) {
			t.Errorf("await past the deadline = %v, %v; want an error matching DeadlineExceeded and ErrNotAcquired", l, err)
		}
	})
}

func TestWait_strategyGivesUp(t *testing.T) {
	var qs queues
	w := newTestWait(&qs, LimitAttempts(FixedDelay(time.Millisecond), 2), nil, false)
	defer w.end(nil)
	mustGoOn(t, t.Context(), w, errHeldAttempt)
	if l, err := w.next(t.Context(), errDown); l != nil || err != errDown {
		t.Errorf("next after the last attempt = %v, %v; want the attempt's own error", l, err)
	}
}

// The turn passes in arrival order; a call that arrives while others wait
// queues behind them without trying; and the next holder after one that
// took the key waits for that lock's release.
func TestQueue_turnPassesInArrivalOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var qs queues
		ctx := t.Context()
		holder := newTestWait(&qs, FixedDelay(time.Hour), nil, false)
		awaitAfter(t, ctx, holder)
		mustGoOn(t, ctx, holder, errHeldAttempt) // holds the turn now

		type turn struct {
			name  string
			after time.Duration // from the holder's end to the call's attempt
		}
		turns := make(chan turn, 2)
		var ended time.Time
		for _, name := range []string{"second", "third"} {
			w := newTestWait(&qs, FixedDelay(time.Hour), nil, false)
			go func() {
				if _, err := w.next(ctx, nil); err != nil {
					t.Errorf("%s: await: %v", name, err)
				}
				turns <- turn{name, time.Since(ended)}
				w.end(&Lock{}) // it took the key
			}()
			synctest.Wait()
			if w.place != queued {
				t.Fatalf("%s arrived while others waited: place = %v, want queued", name, w.place)
			}
		}
		ended = time.Now()
		holder.end(nil) // gave up: the turn passes
		second, third := <-turns, <-turns
		if second.name != "second" || third.name != "third" {
			t.Fatalf("turn taken by %s, then %s; want second, then third", second.name, third.name)
		}
		if second.after != 0 {
			t.Errorf("second, after a holder that gave up, tried after %v; want at once", second.after)
		}
		if third.after < 30*time.Minute {
			t.Errorf("third, after a holder that took the key, tried after %v; want it to wait for a release (or the strategy's delay)", third.after)
		}
		synctest.Wait() // third ends its wait after it reported its turn
		if n := qs.n.Load(); n != 0 || len(qs.m) != 0 {
			t.Errorf("after every call left: %d queues counted, %d in the map", n, len(qs.m))
		}
	})
}

// A call waiting for the turn counts the holder's attempts as its own, so
// that its strategy gives up when it would have without the queue.
func TestQueue_waiterForTurnHonoursStrategy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var qs queues
		holder := newTestWait(&qs, FixedDelay(time.Hour), nil, false)
		defer holder.end(nil)
		awaitAfter(t, t.Context(), holder)
		mustGoOn(t, t.Context(), holder, errHeldAttempt)

		w := newTestWait(&qs, LimitAttempts(FixedDelay(time.Second), 3), nil, false)
		defer w.end(nil)
		start := time.Now()
		_, err := w.next(t.Context(), nil)
		if !errors.Is(err, ErrNotAcquired) {
			t.Errorf("await = %v; want ErrNotAcquired once the strategy gives up", err)
		}
		if d := time.Since(start); d < time.Second || d > 2*time.Second {
			t.Errorf("gave up after %v; want two jittered delays of at most 1s each, at least 1s", d)
		}
	})
}

func TestQueue_releasedSignalsAllButTheQuiet(t *testing.T) {
	var qs queues
	q := qs.join("k")
	defer qs.leave("k", q)
	qs.released("k", q)
	select {
	case <-q.released:
		t.Error("a release signalled to the queue that was to stay quiet")
	default:
	}
	qs.released("k", nil)
	select {
	case <-q.released:
	default:
		t.Error("a release was not signalled to the key's queue")
	}
	qs.released("other", nil) // no queue: nothing to do
}

func TestHandover_states(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var qs queues
		q := qs.join("k")
		defer qs.leave("k", q)
		o := defaultOptions()
		since := time.Now()

		if h := qs.claim("k", since); h != nil {
			t.Fatal("claimed a handover nobody offered")
		}
		h := qs.offer(q, &o)
		if !h.withdraw() {
			t.Fatal("an unclaimed offer could not be withdrawn")
		}
		if qs.claim("k", since) != nil {
			t.Fatal("claimed a withdrawn offer")
		}

		h = qs.offer(q, &o)
		if qs.claim("k", since) != h {
			t.Fatal("the offer was not claimed")
		}
		if h.withdraw() {
			t.Error("a claimed offer was withdrawn")
		}
		if !h.abandon() {
			t.Error("a claimed offer could not be abandoned")
		}
		if h.deliver(&Lock{}) {
			t.Error("a lock was delivered to an abandoned handover")
		}

		h = qs.offer(q, &o)
		if qs.claim("k", since) != h || !h.deliver(&Lock{}) || h.abandon() {
			t.Error("claim, deliver, then abandon: want delivered, and abandon refused")
		}
		if l := <-h.result; l == nil {
			t.Error("the delivered lock did not arrive")
		}

		// The run of handovers began at since: it ends after handoverWindow.
		time.Sleep(handoverWindow)
		h = qs.offer(q, &o)
		if qs.claim("k", since) != nil {
			t.Error("claimed a handover after the run's window")
		}
		if qs.claim("k", time.Now()) != h {
			t.Error("a new run, after the window ended the old one, did not claim the offer")
		}
	})
}
