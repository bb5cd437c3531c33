package redlock

import (
	"sync"
	"sync/atomic"
	"time"
)

// byLease remembers a set of nodes for each of the leases this client
// holds, by value. A Redlock keeps two:
//
//   - sparse: the nodes that a lease's acquisition never asked (see
//     round.fanOutQuorum), so that its extensions and its release ask only
//     the others, since the value is on none of those. A lease not found
//     there, or one whose extension took the key on more nodes (see
//     Redlock.Extend), is extended and released on every node, as
//     before, which is always correct.
//   - lateSets: the nodes where a granted lease's SET got no answer, and
//     may land late (see acquireRound.afterAll), for its release to
//     remember as leftovers. A lease not found there only loses that.
//
// So entries may be lost, and are, once the map grows past maxByLease
// with leases past their TTL at their grant (never released: the holder
// forgot, or lost them; or extended since). It is safe for concurrent
// use.
type byLease struct {
	mu sync.Mutex
	m  map[string]leaseNodes
	n  atomic.Int32 // len(m), read without mu
}

// leaseNodes is what byLease keeps of one lease.
type leaseNodes struct {
	nodes uint64    // bit i: node i
	until time.Time // the lease's end at its grant
}

// maxByLease bounds a byLease's map before it drops leases past their
// TTL.
const maxByLease = 1 << 12

// add remembers nodes for value, a lease of ttl.
func (s *byLease) add(value string, nodes uint64, ttl time.Duration) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]leaseNodes)
	}
	if len(s.m) >= maxByLease {
		for v, l := range s.m {
			if now.After(l.until) {
				delete(s.m, v)
			}
		}
	}
	s.m[value] = leaseNodes{nodes: nodes, until: now.Add(ttl)}
	s.n.Store(int32(len(s.m)))
}

// take forgets value and returns its nodes: none if it is not
// remembered. It is cheap when nothing is.
func (s *byLease) take(value string) uint64 {
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
	return l.nodes
}

// peek returns value's nodes, and keeps them: none if it is not
// remembered. It is cheap when nothing is.
func (s *byLease) peek(value string) uint64 {
	if s.n.Load() == 0 {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[value].nodes
}

// forget forgets value.
func (s *byLease) forget(value string) {
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
