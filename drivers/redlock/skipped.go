package redlock

import (
	"context"
	"sync"
	"sync/atomic"
)

// maxSkipped bounds the releases held back per node (see skipped); the
// oldest go first, and their keys expire by their TTL.
const maxSkipped = 1024

// skipped holds the releases that a node's open breaker kept from it, to
// send once the node answers again. A release returns at a quorum, and a
// node whose breaker opened (on a loaded machine, a healthy node that
// missed a few timeouts in a row) may still hold the lock: without them,
// the key would stay held there, by a lock its holder believes released,
// until its TTL.
type skipped struct {
	mu      sync.Mutex
	calls   [][]any      // release script calls, oldest first
	n       atomic.Int32 // len(calls), read without mu on every answer
	sending bool         // a goroutine is sending calls
}

// skip remembers call, a release that node i's breaker held back.
func (r *Redlock) skip(i int, call []any) {
	s := &r.skipped[i]
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.calls) >= maxSkipped {
		s.calls = s.calls[1:]
	}
	s.calls = append(s.calls, call)
	s.n.Store(int32(len(s.calls)))
}

// sendSkipped sends node i, which just answered, the releases its breaker
// held back, on a goroutine of their own, one at a time; the first that
// fails ends them (the node is in trouble again: the rest expire by their
// TTL). It is cheap when there are none.
func (r *Redlock) sendSkipped(i int) {
	s := &r.skipped[i]
	if s.n.Load() == 0 {
		return
	}
	s.mu.Lock()
	if s.sending || len(s.calls) == 0 || r.bgctx.Err() != nil {
		s.mu.Unlock()
		return
	}
	calls := s.calls
	s.calls, s.sending = nil, true
	s.n.Store(0)
	r.bg.Add(1)
	s.mu.Unlock()
	go func() {
		defer r.bg.Done()
		defer func() {
			s.mu.Lock()
			s.sending = false
			s.mu.Unlock()
		}()
		for _, call := range calls {
			ctx, cancel := context.WithTimeout(r.bgctx, max(cleanupTimeout, r.roundTimeout(0)))
			_, err := run(ctx, r.nodes[i], releaseScript, call)
			cancel()
			if err != nil {
				return
			}
		}
	}()
}

// stopSending drops the releases still held back and waits for the
// goroutines that send them. A sender counts itself in under its node's
// mu, and only while bgctx is alive, so once each mu has been taken after
// bgcancel, no sender can start beside the wait.
func (r *Redlock) stopSending() {
	r.bgcancel()
	for i := range r.skipped {
		s := &r.skipped[i]
		s.mu.Lock()
		s.calls = nil
		s.n.Store(0)
		s.mu.Unlock()
	}
	r.bg.Wait()
}
