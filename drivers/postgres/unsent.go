package postgres

import (
	"sync"
	"sync/atomic"
)

// unsentValues bounds how many values unsent remembers; forgetting one
// only costs its release a round trip (or a request timeout, on a server
// that does not answer).
const unsentValues = 4096

// unsent remembers the values of acquisitions whose statement never left
// the client: no connection could be had for it, or pgx failed it before
// sending anything. The core releases what a failed acquisition may have
// taken, since it cannot tell; for these, Release answers at once that the
// value holds nothing, instead of waiting for a connection to a server
// that may not answer.
type unsent struct {
	n      atomic.Int32 // len(values), so that a release checks without locking
	mu     sync.Mutex
	values map[string]struct{}
}

func (u *unsent) add(value string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.values == nil || len(u.values) >= unsentValues {
		u.values = make(map[string]struct{})
	}
	u.values[value] = struct{}{}
	u.n.Store(int32(len(u.values)))
}

// take reports whether value was remembered, and forgets it.
func (u *unsent) take(value string) bool {
	if u.n.Load() == 0 {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	_, ok := u.values[value]
	delete(u.values, value)
	u.n.Store(int32(len(u.values)))
	return ok
}
