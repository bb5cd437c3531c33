package redlock

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// maxLeftovers bounds the keys whose released values a Redlock
// remembers (see leftovers). Past it, an arbitrary one is forgotten: its
// value expires by its TTL.
const maxLeftovers = 1024

// leftovers are this client's dead values (released, or of failed
// attempts) that may still hold their keys on some nodes: a release did
// not reach those nodes (it timed out, failed, or a breaker held it back),
// or a SET of the value there got no answer and may land late, after the
// release or the undo. Found there by the client's next acquisition of
// the key, such a value would make it report the key as held by another
// holder, when no lock holds it. So that acquisition takes the key there
// if it holds such a value (see acquireRound.ask and retakeScript). It is
// safe for concurrent use.
//
// A value that may land late is kept for lateMemory, across
// acquisitions: a SET that got no answer was sent, and the server may run
// it whenever it reads it, after the next acquisition and release of the
// key too (see "Late SETs" in DESIGN.md). Any other is forgotten by the
// acquisition that takes it.
type leftovers struct {
	mu   sync.Mutex
	byLK map[string][]leftover // by lock key, oldest first, at most maxPerKey
	n    atomic.Int32          // len(byLK), read without mu
}

// maxPerKey bounds the dead values remembered of one key: a client's
// goroutines may share it, and one goroutine that takes and releases it
// at full speed leaves a value a release for each of its releases still
// out (see take).
const maxPerKey = 16

// lateMemory is how long a value whose SET got no answer on some node
// is remembered after that, since the SET may land there late.
const lateMemory = time.Minute

// A leftover is a dead value, and the nodes that may still hold it.
type leftover struct {
	value   string
	nodes   uint64    // bit i: node i may hold it
	release *round    // the release's round, while its requests may be out: a node it has not answered there may hold it too
	late    time.Time // if set, a SET of the value may land late on lateOn: kept across acquisitions until then
	lateOn  uint64    // bit i: a SET of the value may land late on node i (also in nodes)
}

// add remembers that value, dead, may still hold lk on nodes, and on the
// nodes where release (if not nil), the round of its release, has not
// answered yet. What was remembered of value on lk stays.
func (ls *leftovers) add(lk, value string, nodes uint64, release *round) {
	ls.remember(lk, value, nodes, release, false)
}

// addLate remembers that a SET of value, dead, on nodes got no answer,
// and may land there late: for lateMemory from now, every acquisition of
// lk takes the key from it.
func (ls *leftovers) addLate(lk, value string, nodes uint64) {
	ls.remember(lk, value, nodes, nil, true)
}

// remember is add, and addLate if late.
func (ls *leftovers) remember(lk, value string, nodes uint64, release *round, late bool) {
	if nodes == 0 && release == nil {
		return
	}
	var until time.Time
	var lateOn uint64
	if late {
		until, lateOn = time.Now().Add(lateMemory), nodes
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
			if until.After(l[i].late) {
				l[i].late = until
			}
			l[i].lateOn |= lateOn
			return
		}
	}
	if len(l) == maxPerKey {
		l = l[1:]
	}
	ls.byLK[lk] = append(l, leftover{value: value, nodes: nodes, release: release, late: until, lateOn: lateOn})
	ls.n.Store(int32(len(ls.byLK)))
}

// settle tells that every request of release, the round that released
// value on lk, has ended, and that nodes may still hold value: late of
// them because its acquisition's SET there got no answer, and may land
// late. It replaces what add remembered of it; if an acquisition took
// that meanwhile, it remembers nodes anew.
func (ls *leftovers) settle(lk, value string, nodes, late uint64, release *round) {
	if late != 0 {
		ls.addLate(lk, value, late)
	}
	ls.mu.Lock()
	l := ls.byLK[lk]
	for i := range l {
		if l[i].value != value || l[i].release != release {
			continue
		}
		if nodes|l[i].lateOn != 0 {
			// The nodes where a SET may land late stay, whichever of
			// this and addLate came first.
			l[i].nodes, l[i].release = nodes|l[i].lateOn, nil
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

// take returns what is remembered of lk, and forgets it, but for values
// that may still land late (see addLate), which it keeps until their time
// is up, and values whose release still has requests out, which it keeps
// until the release settles them. Their acquisition's SET on a node whose
// release has not answered may not even have been sent yet (a worker
// goroutine short of CPU): it may land after this acquisition and the
// next. Forgotten by the first acquisition, such a value made a later one
// report the key held (MeasureSaturated on valkey-go, with the five nodes
// answering a few operations apart: a goroutine's own value from six
// operations before, set on one node after two later releases there).
// It is cheap when nothing is remembered.
func (ls *leftovers) take(lk string) []leftover {
	if ls.n.Load() == 0 {
		return nil
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l, ok := ls.byLK[lk]
	if !ok {
		return nil
	}
	now := time.Now()
	var kept []leftover
	for _, lo := range l {
		if now.Before(lo.late) || lo.release != nil && lo.release.running.Load() > 0 {
			kept = append(kept, lo)
		}
	}
	if len(kept) == 0 {
		delete(ls.byLK, lk)
		ls.n.Store(int32(len(ls.byLK)))
	} else {
		ls.byLK[lk] = kept
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
