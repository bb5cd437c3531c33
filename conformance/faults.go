package conformance

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/distlock/lock"
)

// Faults breaks and mends the nodes of a quorum driver's backend, for the
// suite's fault cases. The suite runs those cases one at a time, before any
// other case of the same Run, and mends every node it broke before moving
// on. Methods report failures with t.Fatal.
type Faults interface {
	// Nodes returns the number of independent nodes.
	Nodes() int

	// Kill stops node i as a crash would. Its connections are refused.
	Kill(t *testing.T, i int)

	// Hang freezes node i, as SIGSTOP would. The node accepts connections
	// and requests but answers none.
	Hang(t *testing.T, i int)

	// Restart brings node i back and waits until it answers. A killed node
	// restarts empty, and a hung one resumes with its data. Restarting a
	// node that is up does nothing. The suite resumes hung nodes before it
	// restarts killed ones.
	Restart(t *testing.T, i int)
}

// faultCases returns the fault cases, or none if the harness has no
// Faults.
func (s *suite) faultCases() []testCase {
	if s.h.Faults == nil {
		return nil
	}
	return []testCase{
		{"Faults_minorityKilled", func(t *testing.T) { s.minority(t, s.h.Faults.Kill) }},
		{"Faults_minorityHung", func(t *testing.T) { s.minority(t, s.h.Faults.Hang) }},
		{"Faults_majorityKilled", func(t *testing.T) { s.majority(t, s.h.Faults.Kill) }},
		{"Faults_majorityHung", func(t *testing.T) { s.majority(t, s.h.Faults.Hang) }},
		{"Faults_majorityHungEndsKeptLock", s.majorityHungEndsKeptLock},
		{"Faults_minorityHungContention", s.minorityHungContention},
		{"Faults_majorityHungCancelsDo", s.majorityHungCancelsDo},
	}
}

// breakNodes applies fault to nodes 0..n-1 and mends them when the test
// ends.
func (s *suite) breakNodes(t *testing.T, n int, fault func(*testing.T, int)) {
	t.Helper()
	for i := 0; i < n; i++ {
		t.Cleanup(func() { s.h.Faults.Restart(t, i) })
		fault(t, i)
	}
}

// minority breaks as many nodes as a quorum can lose and checks that
// locks still work, and are not slowed down by the broken nodes.
func (s *suite) minority(t *testing.T, fault func(*testing.T, int)) {
	n := s.h.Faults.Nodes()
	if n < 3 {
		t.Skipf("%d nodes: no minority can fail without losing the quorum", n)
	}
	ctx := s.ctxFor(t)
	a, b := s.client(t), s.client(t)
	k := key(t, "")
	s.breakNodes(t, (n-1)/2, fault)

	for i := 0; i < 3; i++ {
		start := time.Now()
		l, err := a.TryAcquire(ctx, k)
		if err != nil {
			t.Fatalf("TryAcquire with %d of %d nodes broken: %v", (n-1)/2, n, err)
		}
		assertHeld(t, ctx, b, k, "a quorum of nodes holds it")
		if err := l.Release(ctx); err != nil {
			t.Fatalf("Release with %d of %d nodes broken: %v", (n-1)/2, n, err)
		}
		if took := time.Since(start); took > s.h.TTL {
			t.Errorf("acquire, check and release took %v with a broken minority: the healthy quorum should decide (TTL %v)", took, s.h.TTL)
		}
		assertFree(t, ctx, b, k, "it was released on a quorum of nodes")
	}
}

// majority breaks a majority of nodes and checks that acquisitions fail
// promptly, with an error that is not ErrNotAcquired, and leave nothing on
// the nodes that stayed up.
func (s *suite) majority(t *testing.T, fault func(*testing.T, int)) {
	n := s.h.Faults.Nodes()
	ctx := s.ctxFor(t)
	c := s.client(t)
	k := key(t, "")
	broken := n/2 + 1
	s.breakNodes(t, broken, fault)
	// A long TTL, so that anything the attempts leave behind stays there
	// until the check below.
	opts := []lock.Option{lock.WithTTL(time.Minute), lock.WithRetry(lock.FixedDelay(s.h.TTL / 10))}

	start := time.Now()
	l, err := c.TryAcquire(ctx, k, opts...)
	took := time.Since(start)
	if err == nil {
		l.Release(ctx)
		t.Fatalf("TryAcquire succeeded with %d of %d nodes broken", broken, n)
	}
	if errors.Is(err, lock.ErrNotAcquired) {
		t.Errorf("TryAcquire with %d of %d nodes broken = %v; it must not claim that someone holds the key", broken, n, err)
	}
	if took > s.h.TTL {
		t.Errorf("TryAcquire with %d of %d nodes broken took %v; it should fail as soon as the quorum is out of reach (TTL %v)", broken, n, took, s.h.TTL)
	}
	wctx, cancel := context.WithTimeout(ctx, s.h.TTL)
	defer cancel()
	if _, err := c.Acquire(wctx, k, opts...); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Acquire with %d of %d nodes broken = %v, want it to keep trying until its context ends", broken, n, err)
	}

	// Bring the broken nodes back empty, because a hung node may
	// legitimately still hold what it received before it froze. Then take a
	// minority of them down again, so that a quorum needs every node that
	// stayed up. Any key the failed attempts left on those makes the
	// acquisition fail.
	for i := 0; i < broken; i++ {
		s.h.Faults.Restart(t, i) // first, so that no node is hung while others restart
	}
	for i := 0; i < broken; i++ {
		s.h.Faults.Kill(t, i)
	}
	for i := 0; i < broken; i++ {
		s.h.Faults.Restart(t, i)
	}
	for i := 0; i < (n-1)/2; i++ {
		s.h.Faults.Kill(t, i)
	}
	// The last attempt's cleanup goes on in the background once Acquire's
	// context has ended. Give it the TTL, far less than the minute that a
	// leftover would live. CI once checked before a cleanup had run.
	checker := s.client(t)
	giveUp := time.Now().Add(s.h.TTL)
	for {
		l, err = checker.TryAcquire(ctx, k)
		if err == nil {
			l.Release(ctx)
			return
		}
		if time.Now().After(giveUp) {
			t.Fatalf("TryAcquire on the nodes that stayed up, plus restarted ones = %v: the failed attempts left the key held", err)
		}
		time.Sleep(s.h.TTL / 20)
	}
}

// majorityHungEndsKeptLock hangs a majority of nodes under a lock that
// KeepAlive keeps. The extensions cannot succeed, and Done must be closed
// by the lock's ValidUntil, whatever the hung nodes do.
func (s *suite) majorityHungEndsKeptLock(t *testing.T) {
	n := s.h.Faults.Nodes()
	ctx := s.ctxFor(t)
	c := s.client(t)
	l := mustAcquire(t, ctx, c, key(t, ""), lock.WithTTL(2*s.h.TTL))
	stop := l.KeepAlive()
	defer stop()
	done := l.Done()
	s.breakNodes(t, n/2+1, s.h.Faults.Hang)
	select {
	case <-done:
		// The timer fires at ValidUntil. Allow for a loaded machine.
		if late := time.Since(l.ValidUntil()); late > s.h.TTL/5 {
			t.Errorf("Done closed %v after ValidUntil with a majority hung", late)
		}
	case <-ctx.Done():
		t.Fatal("Done not closed with a majority of nodes hung")
	}
	if err := l.Err(); !errors.Is(err, lock.ErrLost) {
		t.Errorf("Err with a majority hung = %v, want an error matching ErrLost", err)
	}
}
