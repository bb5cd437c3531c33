package redlock

import (
	"context"
	"sync"
	"sync/atomic"
)

// maxLeftovers bounds the keys whose released values a Redlock
// remembers (see leftovers). Past it, an arbitrary one is forgotten: its
// value expires by its TTL.
const maxLeftovers = 1024

// leftovers are this client's released values that may still hold their
// keys on some nodes: the release did not reach those nodes (it timed
// out, failed, or a breaker held it back), or the acquisition's SET there
// got no answer and may have landed after the release. Found there by the
// client's next acquisition of the key, such a value would make it report
// the key as held by another holder, when its only holder released it.
// So that acquisition first deletes the value on those nodes (see
// acquireRound.ask). It is safe for concurrent use.
type leftovers struct {
	mu   sync.Mutex
	byLK map[string]leftover // by lock key
	n    atomic.Int32        // len(byLK), read without mu
}

// A leftover is a released value, and the nodes that may still hold it.
type leftover struct {
	value   string
	nodes   uint64 // bit i: node i may hold it
	release *round // the release's round, while its requests may be out: a node it has not answered there may hold it too
}

// add remembers that value, released, may still hold lk on nodes, beside
// what was remembered of value on lk. A value of lk remembered before is
// forgotten: an acquisition of lk since took that over.
func (ls *leftovers) add(lk, value string, nodes uint64, release *round) {
	if nodes == 0 && release == nil {
		return
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.byLK == nil {
		ls.byLK = make(map[string]leftover)
	}
	if _, ok := ls.byLK[lk]; !ok && len(ls.byLK) >= maxLeftovers {
		for k := range ls.byLK {
			delete(ls.byLK, k)
			break
		}
	}
	if l, ok := ls.byLK[lk]; ok && l.value == value {
		nodes |= l.nodes
	}
	ls.byLK[lk] = leftover{value: value, nodes: nodes, release: release}
	ls.n.Store(int32(len(ls.byLK)))
}

// settle replaces what add remembered of value on lk with the release's
// requests out (release), now that they have all ended: nodes may hold
// it. It remembers nodes alone if lk's leftover was taken meanwhile.
func (ls *leftovers) settle(lk, value string, nodes uint64, release *round) {
	ls.mu.Lock()
	l, ok := ls.byLK[lk]
	if ok && l.release == release {
		delete(ls.byLK, lk)
		ls.n.Store(int32(len(ls.byLK)))
	}
	ls.mu.Unlock()
	ls.add(lk, value, nodes, nil)
}

// take returns and forgets what is remembered of lk. It is cheap when
// nothing is.
func (ls *leftovers) take(lk string) (leftover, bool) {
	if ls.n.Load() == 0 {
		return leftover{}, false
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l, ok := ls.byLK[lk]
	if ok {
		delete(ls.byLK, lk)
		ls.n.Store(int32(len(ls.byLK)))
	}
	return l, ok
}

// clear deletes the leftover value of an acquisition's key on node n, if
// the node may hold it, before the acquisition's own request there. It
// is best effort: if it fails, the SET that follows finds out.
func (l leftover) clear(ctx context.Context, i int, n Node, lk string) {
	mayHold := l.nodes&(1<<i) != 0
	if rd := l.release; rd != nil && !mayHold {
		// Its release there not yet answered, it may come after this
		// acquisition's SET, on another connection.
		mayHold = rd.ended.Load()&(1<<i) == 0 || rd.results[i].err != nil
	}
	if !mayHold {
		return
	}
	run(ctx, n, undoScript, undoScript.call([]string{lk}, l.value)) //nolint:errcheck
}
