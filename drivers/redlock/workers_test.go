package redlock

import (
	"strconv"
	"sync"
	"testing"
	"time"
)

// Workers beyond maxIdle exit when done, rather than wait: after a burst
// of requests in flight, and after rounds that followed one another (each
// round's caller goes on before its workers are idle again, which starts
// new ones; how many are busy at once is the scheduler's doing).
func TestWorkers_idleBounded(t *testing.T) {
	r, fs := fakes(t, 5)
	maxIdle := r.workers.maxIdle
	fs[4].setDelay(50 * time.Millisecond)
	var wg sync.WaitGroup
	for g := range 40 {
		wg.Go(func() {
			if _, err := r.Acquire(t.Context(), "burst"+strconv.Itoa(g), "v", time.Minute); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	burst := r.workers.running()
	fs[4].setDelay(0)
	time.Sleep(100 * time.Millisecond) // node 4's requests end
	afterBurst := r.workers.running()
	peak := 0
	for i, deadline := 0, time.Now().Add(300*time.Millisecond); time.Now().Before(deadline); i++ {
		// A key of its own: a release ends at a quorum's answers, and the
		// next acquisition of its key could find it still held on the
		// others.
		key := "steady" + strconv.Itoa(i)
		if _, err := r.Acquire(t.Context(), key, "v", time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := r.Release(t.Context(), key, "v"); err != nil {
			t.Fatal(err)
		}
		peak = max(peak, r.workers.running())
	}
	t.Logf("workers (at most %d idle): %d during a burst, %d after it, at most %d during 300ms of one round at a time", maxIdle, burst, afterBurst, peak)
	if burst <= maxIdle {
		t.Fatalf("%d workers during a burst of 40 rounds of 5 requests, one of them slow: the test makes no burst", burst)
	}
	if afterBurst > maxIdle {
		t.Errorf("%d workers once the burst's requests ended, want at most %d", afterBurst, maxIdle)
	}
	time.Sleep(50 * time.Millisecond)
	if n := r.workers.running(); n > maxIdle {
		t.Errorf("%d workers once the rounds one at a time ended, want at most %d", n, maxIdle)
	}
}

// Closing makes idle workers exit, and busy ones once their request ends;
// a round run after Close still completes.
func TestWorkers_close(t *testing.T) {
	r, fs := fakes(t, 5)
	if _, err := r.Acquire(t.Context(), "k", "v", time.Minute); err != nil {
		t.Fatal(err)
	}
	fs[4].setDelay(50 * time.Millisecond)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Acquire(t.Context(), "k2", "v", time.Minute) // a worker busy on node 4 while Close runs
	}()
	time.Sleep(10 * time.Millisecond)
	r.workers.close()
	<-done
	r.Acquire(t.Context(), "k3", "v", time.Minute)
	deadline := time.Now().Add(2 * time.Second)
	for r.workers.running() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := r.workers.running(); n > 0 {
		t.Errorf("%d workers still running after close", n)
	}
}

// Idle workers exit after idleFor, and before twice as long, though no
// timer of their own runs: the reaper's ticks make them exit.
func TestWorkers_idleExit(t *testing.T) {
	r, _ := fakes(t, 5)
	const idleFor = 100 * time.Millisecond
	r.workers.idleFor = idleFor
	start := time.Now()
	if _, err := r.Acquire(t.Context(), "k", "v", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := r.Release(t.Context(), "k", "v"); err != nil {
		t.Fatal(err)
	}
	if n := r.workers.running(); n == 0 && time.Since(start) < idleFor {
		t.Fatal("no worker left running right after a round: they exit at once, not when idle for long")
	}
	deadline := time.Now().Add(2*idleFor + time.Second) // a second of slack for a loaded machine
	for r.workers.running() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := r.workers.running(); n > 0 {
		t.Fatalf("%d workers still running %v after their last request, want none past %v", n, time.Since(start).Round(time.Millisecond), 2*idleFor)
	}
	// Workers started after the others exited are reaped the same way.
	if _, err := r.Acquire(t.Context(), "k", "v", time.Minute); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(2*idleFor + time.Second)
	for r.workers.running() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := r.workers.running(); n > 0 {
		t.Fatalf("%d workers of a second round still running, want none past %v", n, 2*idleFor)
	}
}
