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
// So that acquisition takes the key there if it holds such a value (see
// acquireRound.ask and retakeScript). It is safe for concurrent use.
type leftovers struct {
	mu   sync.Mutex
	byLK map[string][]leftover // by lock key, oldest first, at most maxPerKey
	n    atomic.Int32          // len(byLK), read without mu
}

// maxPerKey bounds the released values remembered of one key: a client's
// goroutines may share it.
const maxPerKey = 4

// A leftover is a released value, and the nodes that may still hold it.
type leftover struct {
	value   string
	nodes   uint64 // bit i: node i may hold it
	release *round // the release's round, while its requests may be out: a node it has not answered there may hold it too
}

// add remembers that value, released, may still hold lk on nodes, and on
// the nodes where release (if not nil), the round of its release, has not
// answered yet. What was remembered of value on lk stays.
func (ls *leftovers) add(lk, value string, nodes uint64, release *round) {
	if nodes == 0 && release == nil {
		return
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.byLK == nil {
		ls.byLK = make(map[string][]leftover)
	}
	l := ls.byLK[lk]
	if l == nil && len(ls.byLK) >= maxLeftovers {
		for k := range ls.byLK {
			delete(ls.byLK, k)
			break
		}
	}
	for i := range l {
		if l[i].value == value {
			l[i].nodes |= nodes
			if release != nil {
				l[i].release = release
			}
			return
		}
	}
	if len(l) == maxPerKey {
		l = l[1:]
	}
	ls.byLK[lk] = append(l, leftover{value: value, nodes: nodes, release: release})
	ls.n.Store(int32(len(ls.byLK)))
}

// settle tells that every request of release, the round that released
// value on lk, has ended, and that nodes may still hold value. It replaces
// what add remembered of it; if an acquisition took that meanwhile, it
// remembers nodes anew.
func (ls *leftovers) settle(lk, value string, nodes uint64, release *round) {
	ls.mu.Lock()
	l := ls.byLK[lk]
	for i := range l {
		if l[i].value != value || l[i].release != release {
			continue
		}
		if nodes != 0 {
			l[i].nodes, l[i].release = nodes, nil
		} else if l = append(l[:i:i], l[i+1:]...); len(l) == 0 {
			delete(ls.byLK, lk)
			ls.n.Store(int32(len(ls.byLK)))
		} else {
			ls.byLK[lk] = l
		}
		ls.mu.Unlock()
		return
	}
	ls.mu.Unlock()
	ls.add(lk, value, nodes, nil)
}

// take returns and forgets what is remembered of lk. It is cheap when
// nothing is.
func (ls *leftovers) take(lk string) []leftover {
	if ls.n.Load() == 0 {
		return nil
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l, ok := ls.byLK[lk]
	if ok {
		delete(ls.byLK, lk)
		ls.n.Store(int32(len(ls.byLK)))
	}
	return l
}

// on reports whether node i (whose request is about to be sent) may
// hold the leftover value: a release that did not reach it, or that has
// not answered there yet and may come after the request, on another
// connection.
func (l leftover) on(i int) bool {
	if l.nodes&(1<<i) != 0 {
		return true
	}
	rd := l.release
	return rd != nil && (rd.ended.Load()&(1<<i) == 0 || rd.results[i].err != nil)
}

// clear deletes the leftover value of an acquisition's key on node n (the
// i-th), if the node may hold it, before the acquisition's own request
// there: the fenced acquisitions' way. It is best effort: if it fails, the
// request that follows finds out.
func (l leftover) clear(ctx context.Context, i int, n Node, lk string) {
	if l.on(i) {
		run(ctx, n, undoScript, undoScript.call([]string{lk}, l.value)) //nolint:errcheck
	}
}
