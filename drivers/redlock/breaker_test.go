package redlock

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// requests counts the commands f received.
func (f *fakeNode) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked
}

// The breaker's rules, on a clock of its own: a burst after a quiet spell
// goes out whole; past its silence a node takes requests only while fewer
// than maxSilentInflight wait on it; after breakAfter timeouts in a row,
// one probe at a time; any answer closes it; a request its round gave up
// on is no timeout.
func TestBreaker_admit(t *testing.T) {
	const ms = int64(time.Millisecond)
	silent := 2 * time.Millisecond
	var b health
	b.answered.Store(math.MinInt64 / 2) // as newHealth leaves it
	timedOutCtx, cancel := context.WithDeadline(context.Background(), time.Now())
	defer cancel()
	admitN := func(now int64, n int) (admitted int) {
		for range n {
			if ok, _ := b.admit(now, silent); ok {
				admitted++
			}
		}
		return admitted
	}

	// A burst within the silence: all of it, however many.
	if got := admitN(0, 100); got != 100 {
		t.Fatalf("a burst of 100 within the silence: %d admitted, want all", got)
	}
	// Silent past it, with 100 out: none more.
	if got := admitN(3*ms, 5); got != 0 {
		t.Errorf("a node silent for 3ms with 100 requests out took %d more, want 0", got)
	}
	// 90 end, given up on by their rounds (no timeouts): with 10 out, 6
	// more may go, not 7.
	canceled, cancelNow := context.WithCancel(context.Background())
	cancelNow()
	for range 90 {
		b.done(canceled, 4*ms, false, context.Canceled)
	}
	if got := admitN(4*ms, 7); got != maxSilentInflight-10 {
		t.Errorf("a silent node with 10 requests out admitted %d of 7 more, want %d", got, maxSilentInflight-10)
	}
	// breakAfter time out, one as a socket reports it: open, and one
	// probe at a time, even with fewer out than the bound.
	b.done(context.Background(), 5*ms, false, &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded})
	for range 15 {
		b.done(timedOutCtx, 5*ms, false, context.DeadlineExceeded)
	}
	if b.inflight.Load() != 0 {
		t.Fatalf("%d requests out, want 0", b.inflight.Load())
	}
	ok, probe := b.admit(5*ms, silent)
	if !ok || !probe {
		t.Fatalf("open breaker: admit = %v, %v, want a probe", ok, probe)
	}
	if ok, _ := b.admit(5*ms, silent); ok {
		t.Error("open breaker admitted a second request while its probe was out")
	}
	b.done(timedOutCtx, 200*ms, true, context.DeadlineExceeded)
	if ok, probe := b.admit(200*ms, silent); !ok || !probe {
		t.Fatalf("open breaker after its probe timed out: admit = %v, %v, want the next probe", ok, probe)
	}
	// A round that gave up on its request (cancelled it) does not count
	// it as a timeout, nor does an error of another kind.
	before := b.timeouts.Load()
	b.done(canceled, 210*ms, true, context.Canceled)
	b.admit(210*ms, silent)
	b.done(context.Background(), 210*ms, true, errors.New("connection refused"))
	if got := b.timeouts.Load(); got != before {
		t.Errorf("timeouts went from %d to %d on a cancelled request and a refused one", before, got)
	}
	// The probe is answered: closed, and a burst goes out whole again.
	b.admit(220*ms, silent)
	b.done(context.Background(), 221*ms, true, nil)
	if got := admitN(221*ms, 40); got != 40 {
		t.Errorf("after an answer, a burst of 40 at once: %d admitted, want 40", got)
	}
	// ...until the node is silent past its silence again.
	if got := admitN(224*ms, 1); got != 0 {
		t.Errorf("silent for 3ms again with 40 out: %d admitted, want 0", got)
	}
	if t.Failed() {
		return
	}
	// A node whose requests all ended is quiet: the next burst starts a
	// busy spell, and is not silence either.
	for range 40 {
		b.done(timedOutCtx, 400*ms, false, context.DeadlineExceeded)
	}
	b.timeouts.Store(0) // as though it answered, without an answer's time
	if got := admitN(900*ms, 30); got != 30 {
		t.Errorf("a burst after a quiet spell: %d of 30 admitted", got)
	}
}

// Two of five nodes hang under a load of acquisitions. What reaches them
// while they are silent but not yet known hung is a burst of every round
// within the silence (2ms here; how many rounds that is depends on the
// machine's speed), then up to maxSilentInflight; once their first
// requests have timed out, one request at a time, a timeout apart, however
// fast the rounds go; once they answer again, the next round uses them.
// The timeouts come as the context's error, or as Redis clients report
// them: a socket's "i/o timeout", perhaps before the context's timer has
// fired.
func TestBreaker_boundsRequestsToHungNodesAndRecovers(t *testing.T) {
	for _, socket := range []bool{false, true} {
		name := "context"
		if socket {
			name = "socket"
		}
		t.Run(name, func(t *testing.T) { testBreaker(t, socket) })
	}
}

func testBreaker(t *testing.T, socketTimeouts bool) {
	r, fs := fakes(t, 5) // a fixed 200ms node timeout
	hung := fs[3:]
	for _, f := range hung {
		f.mu.Lock()
		f.hang, f.socketTimeouts = true, socketTimeouts
		f.mu.Unlock()
	}
	base := runtime.NumGoroutine()
	var (
		wg     sync.WaitGroup
		peak   int
		rounds atomic.Int64
		mu     sync.Mutex
		stop   atomic.Bool
	)
	for g := range 8 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				key := fmt.Sprintf("k%d-%d", g, i)
				if _, err := r.Acquire(t.Context(), key, "v", time.Minute); err != nil {
					t.Errorf("Acquire with 2 of 5 hung: %v", err)
					return
				}
				r.Release(t.Context(), key, "v")
				rounds.Add(1)
				mu.Lock()
				peak = max(peak, runtime.NumGoroutine()-base)
				mu.Unlock()
			}
		})
	}
	defer func() { stop.Store(true); wg.Wait() }()

	// The first requests time out (200ms), the breakers open, and what
	// the burst left waiting drains: at most a probe each is left.
	// Drained: each breaker is open, and what is out to its node is at
	// most its probe, not a request sent before it opened (one of those,
	// timing out late on a loaded machine, would wait beside the probe).
	// The fake counts a request in after the breaker and out before it.
	drained := func() bool {
		for i := range hung {
			b := &r.health[3+i]
			if b.timeouts.Load() < breakAfter {
				return false
			}
			if n := b.inflight.Load(); n > 1 || n == 1 && !b.probing.Load() {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(5 * time.Second)
	for !drained() {
		if time.Now().After(deadline) {
			t.Fatal("after 5s of 200ms timeouts, a hung node's breaker was not open, or more than a request waited on it: the breakers did not hold the rounds back")
		}
		time.Sleep(time.Millisecond)
	}
	burst := 0
	asked := make([]int, len(hung))
	for i, f := range hung {
		f.mu.Lock()
		burst += f.peakWaiting
		f.peakWaiting, asked[i] = 0, f.asked
		f.mu.Unlock()
	}
	// A second of rounds at full speed against open breakers.
	from, roundsFrom := time.Now(), rounds.Load()
	time.Sleep(time.Second)
	took, ran := time.Since(from), rounds.Load()-roundsFrom
	if ran < 100 {
		t.Fatalf("only %d rounds in %v: too few to load the breakers", ran, took)
	}
	for i, f := range hung {
		f.mu.Lock()
		n, w := f.asked-asked[i], f.peakWaiting
		f.mu.Unlock()
		// A probe per 200ms timeout, and one more for an answer racing it.
		if want := int(took/(200*time.Millisecond)) + 2; n > want {
			t.Errorf("%s: %d requests in %v of %d rounds with open breakers, want at most %d (a probe a timeout)", f.name, n, took.Round(time.Millisecond), ran, want)
		}
		if w > 1 {
			t.Errorf("%s: %d requests waited at once with an open breaker, want 1", f.name, w)
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d requests waited on the hung nodes in the first burst; then %d rounds in %v; goroutines peaked at %d more than at the start (8 of them the test's)", burst, ran, took.Round(time.Millisecond), peak)

	fs[3].setHang(false)
	fs[4].setHang(false)
	time.Sleep(250 * time.Millisecond) // the probes out while hung time out
	deadline = time.Now().Add(2 * time.Second)
	for before := fs[4].requests(); time.Now().Before(deadline); {
		r.Acquire(t.Context(), "again", "v", time.Minute)
		r.Release(t.Context(), "again", "v")
		if fs[4].requests() > before+3 {
			return // asked at every round again
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Error("a node that answers again was not asked at every round within 2s")
}

func TestIsTimeout(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{context.DeadlineExceeded, true},
		{fmt.Errorf("node 1: %w", context.DeadlineExceeded), true},
		{&net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, true}, // "i/o timeout"
		{nil, false},
		{context.Canceled, false},
		{errors.New("connection refused"), false},
	} {
		if got := IsTimeout(c.err); got != c.want {
			t.Errorf("IsTimeout(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestRelease_heldBackByABreakerIsSentLater: a release that a node's open
// breaker kept from it (a healthy node on a loaded machine, say, that
// missed a few timeouts in a row after it took the lock) is sent once the
// node answers again, instead of leaving the key held there until its
// TTL.
func TestRelease_heldBackByABreakerIsSentLater(t *testing.T) {
	r, fs := fakes(t, 5)
	ctx := t.Context()
	const key = "k"
	lk := r.lockKey(key)
	if _, err := r.Acquire(ctx, key, "v", time.Minute); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); fs[4].valueOn(lk) != "v"; { // the Acquire returned at a quorum
		if time.Now().After(deadline) {
			t.Fatal("node 4 never took the lock")
		}
		time.Sleep(time.Millisecond)
	}
	b := &r.health[4]
	b.timeouts.Store(breakAfter) // open, with its probe out
	b.probing.Store(true)
	if err := r.Release(ctx, key, "v"); err != nil {
		t.Fatal(err)
	}
	if got := fs[4].valueOn(lk); got != "v" {
		t.Fatalf("right after the release, node 4 holds %q, want v: its breaker was open", got)
	}
	b.timeouts.Store(0) // its probe is answered
	b.probing.Store(false)
	if _, err := r.Acquire(ctx, "other", "w", time.Minute); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for fs[4].valueOn(lk) != "" {
		if time.Now().After(deadline) {
			t.Fatalf("5s after node 4 answered again, it still holds %q: the release its breaker held back was not sent", fs[4].valueOn(lk))
		}
		time.Sleep(time.Millisecond)
	}
}
