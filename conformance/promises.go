package conformance

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distlock/lock"
)

// contentionRun is how long the fault cases contend with nodes broken.
const contentionRun = 3 * time.Second

// minorityHungContention hangs as many nodes as a quorum can lose while
// goroutines of one client, and clients of their own, contend for one key.
// Every lock handed to a caller must still be valid at that moment, no two
// holdings may overlap, and handoffs must go on at no less than a tenth of
// the healthy rate, measured first.
func (s *suite) minorityHungContention(t *testing.T) {
	n := s.h.Faults.Nodes()
	if n < 3 {
		t.Skipf("%d nodes: no minority can fail without losing the quorum", n)
	}
	k := key(t, "")
	shared := s.client(t)
	clients := []*lock.Client{shared, shared, shared, shared, s.client(t), s.client(t), s.client(t), s.client(t)}
	healthy := Handoffs(t, clients, k, 2*s.h.TTL, time.Second, s.h.Fencing)
	s.breakNodes(t, (n-1)/2, s.h.Faults.Hang)
	// A backend whose leader hung (ZooKeeper, etcd) elects another first.
	// The handoffs are measured once it grants again. The acquisition that
	// waits for that is checked like the others.
	ctx := s.ctxFor(t)
	l, err := shared.Acquire(ctx, k, lock.WithTTL(2*s.h.TTL))
	if err != nil {
		t.Fatalf("Acquire with %d of %d nodes hung: %v", (n-1)/2, n, err)
	}
	if l.Err() != nil {
		t.Errorf("Acquire returned a lock whose validity had passed: %v", l.Err())
	}
	l.Release(ctx)
	hung := Handoffs(t, clients, k, 2*s.h.TTL, contentionRun, s.h.Fencing)
	t.Logf("handoffs: %.0f/s with every node up, %.0f/s with %d of %d hung", healthy, hung, (n-1)/2, n)
	if hung < healthy/10 {
		t.Errorf("handoffs fell from %.0f/s to %.0f/s with %d of %d nodes hung; want at least a tenth", healthy, hung, (n-1)/2, n)
	}
}

// Handoffs runs a goroutine per entry of clients (list a client several
// times for several goroutines of one client), each acquiring k with ttl,
// holding it for a millisecond and releasing it, for d. It fails t if a
// lock's validity had passed when Acquire returned it, if two holdings
// overlap, or, if fenced, if a token did not grow. It returns the
// acquisitions per second.
func Handoffs(t *testing.T, clients []*lock.Client, k string, ttl, d time.Duration, fenced bool) float64 {
	t.Helper()
	end := time.Now().Add(d)
	ctx, cancel := context.WithDeadline(t.Context(), end)
	defer cancel()
	var (
		h        History
		acquired atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		problems []string
	)
	report := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(problems) < 10 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	for _, c := range clients {
		wg.Go(func() {
			for ctx.Err() == nil {
				l, err := c.Acquire(ctx, k, lock.WithTTL(ttl))
				got := time.Now()
				if err != nil {
					if ctx.Err() == nil {
						report("Acquire: %v", err)
					}
					continue
				}
				if !got.Before(l.ValidUntil()) || l.Err() != nil {
					report("Acquire returned a lock whose validity had passed %v before (Err: %v)", got.Sub(l.ValidUntil()), l.Err())
				}
				acquired.Add(1)
				time.Sleep(time.Millisecond)
				h.Hold(l, got)
				rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), ttl)
				l.Release(rctx)
				rcancel()
			}
		})
	}
	wg.Wait()
	for _, p := range problems {
		t.Error(p)
	}
	if err := h.Check(fenced); err != nil {
		t.Error(err)
	}
	return float64(acquired.Load()) / d.Seconds()
}

// majorityHungCancelsDo hangs a majority of nodes while Do's function
// runs. The function's context must be cancelled by the lock's
// ValidUntil, give or take max(25ms, TTL/10), whatever the extensions and
// the release do against the hung nodes.
func (s *suite) majorityHungCancelsDo(t *testing.T) {
	n := s.h.Faults.Nodes()
	ctx := s.ctxFor(t)
	c := s.client(t)
	ttl := 2 * s.h.TTL
	var lag time.Duration
	err := c.Do(ctx, key(t, ""), func(fctx context.Context) error {
		s.breakNodes(t, n/2+1, s.h.Faults.Hang)
		select {
		case <-fctx.Done():
			lag = time.Since(lock.FromContext(fctx).ValidUntil())
		case <-ctx.Done():
			return errors.New("fn's context was not cancelled with a majority hung")
		}
		return nil
	}, lock.WithTTL(ttl))
	if !errors.Is(err, lock.ErrLost) {
		t.Errorf("Do with a majority hung = %v, want ErrLost", err)
	}
	t.Logf("fn's context cancelled %v after ValidUntil", lag)
	if bound := max(25*time.Millisecond, ttl/10); lag > bound {
		t.Errorf("fn's context was cancelled %v after ValidUntil with a majority hung; want at most %v", lag, bound)
	}
}

// misconfigured checks that a client whose credentials the backend
// refuses fails at once, with an error matching lock.ErrMisconfigured.
func (s *suite) misconfigured(t *testing.T) {
	if s.h.Misconfigured == nil {
		t.Skip("Harness.Misconfigured is not set")
	}
	c := s.h.Misconfigured(t)
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	start := time.Now()
	l, err := c.Acquire(ctx, key(t, ""))
	took := time.Since(start)
	if err == nil {
		l.Release(ctx)
		t.Fatal("Acquire succeeded with refused credentials")
	}
	if !errors.Is(err, lock.ErrMisconfigured) {
		t.Errorf("Acquire with refused credentials = %v, want an error matching ErrMisconfigured", err)
	}
	if took > time.Second {
		t.Errorf("Acquire with refused credentials took %v; want at most 1s", took)
	}
}
