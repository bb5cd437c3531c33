package redlock

import (
	"sync"
	"sync/atomic"
	"time"
)

// sparse remembers a set of nodes for each of the leases this client
// holds: for Redlock.sparse, the nodes that
// their acquisitions never asked (see round.fanOutQuorum), so that an
// extension or a release asks only the others: the value is on none of
// those. A lease not found here, or one whose extension took the key on
// more nodes (see Redlock.Extend), is extended and released on every
// node, as before, which is always correct; so entries may be lost, and are, once the map grows past
// maxSparse with leases past their TTL at their grant (never released:
// the holder forgot, or lost them; or extended since, whose release then
// asks every node). It is safe for concurrent use.
type sparse struct {
	mu sync.Mutex
	m  map[string]sparseLease
	n  atomic.Int32 // len(m), read without mu
}

// sparseLease is what sparse keeps of one lease.
type sparseLease struct {
	never uint64    // bit i: node i was never asked
	until time.Time // the lease's end at its grant
}

// maxSparse bounds sparse's map before it drops leases past their TTL.
const maxSparse = 1 << 12

// add remembers that value's acquisition never asked the nodes in never,
// for a lease of ttl.
func (s *sparse) add(value string, never uint64, ttl time.Duration) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]sparseLease)
	}
	if len(s.m) >= maxSparse {
		for v, l := range s.m {
			if now.After(l.until) {
				delete(s.m, v)
			}
		}
	}
	s.m[value] = sparseLease{never: never, until: now.Add(ttl)}
	s.n.Store(int32(len(s.m)))
}

// take forgets value and returns the nodes its acquisition never asked:
// none if it is not remembered. It is cheap when nothing is.
func (s *sparse) take(value string) uint64 {
	if s.n.Load() == 0 {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.m[value]
	if !ok {
		return 0
	}
	delete(s.m, value)
	s.n.Store(int32(len(s.m)))
	return l.never
}

// peek returns the nodes that value's acquisition never asked, and keeps
// them: none if it is not remembered.
func (s *sparse) peek(value string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[value].never
}

// forget forgets value: its release asks every node.
func (s *sparse) forget(value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, value)
	s.n.Store(int32(len(s.m)))
}

// neverAsked returns the nodes that value's acquisition never asked, and
// forgets them: none without quorum_first, where every acquisition asks
// every node (and Release takes no lock to find that out).
func (r *Redlock) neverAsked(value string) uint64 {
	if !r.cfg.quorumFirst {
		return 0
	}
	return r.sparse.take(value)
}

// notAsked returns the nodes that value's acquisition never asked, for an
// extension, and keeps them for the release: none without quorum_first.
func (r *Redlock) notAsked(value string) uint64 {
	if !r.cfg.quorumFirst {
		return 0
	}
	return r.sparse.peek(value)
}
