package redlock

// lead returns the node that announces the releases of lk (see Release):
// the one whose name hashed with lk is the highest (rendezvous hashing), so
// that clients that list the same nodes in another order agree on it, and
// keys spread over the nodes. Clients that name a node differently may
// pick different leads, which costs nothing: waiters listen on every node,
// and a woken attempt asks the node that announced first, whichever it is.
func (r *Redlock) lead(lk string) int {
	h := fnv64(lk)
	best, top := 0, mix64(h^r.seeds[0])
	for i := 1; i < len(r.seeds); i++ {
		if v := mix64(h ^ r.seeds[i]); v > top {
			best, top = i, v
		}
	}
	return best
}

// healthyLead returns the healthy node whose name hashed with lk is the
// highest: lk's lead, if it is healthy. It returns false if no node is.
func (r *Redlock) healthyLead(lk string) (int, bool) {
	h := fnv64(lk)
	best, top, found := 0, uint64(0), false
	for i := range r.seeds {
		if v := mix64(h ^ r.seeds[i]); r.healthy(i) && (!found || v > top) {
			best, top, found = i, v, true
		}
	}
	return best, found
}

// fnv64 is the 64-bit FNV-1a hash of s (hash/fnv's, without its
// allocation on the woken attempt's path).
func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h
}

// mix64 is splitmix64's finalizer: every bit of x moves every bit of the
// result.
func mix64(x uint64) uint64 {
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// byRendezvous returns k healthy nodes not in skip, the first in lk's
// rendezvous order (see lead). It reports false if fewer are healthy.
func (r *Redlock) byRendezvous(lk string, k int, skip uint64) (uint64, bool) {
	h := fnv64(lk)
	var picked uint64
	for ; k > 0; k-- {
		best, top, found := 0, uint64(0), false
		for i := range r.seeds {
			if (skip|picked)&(1<<i) != 0 || !r.healthy(i) {
				continue
			}
			if v := mix64(h ^ r.seeds[i]); !found || v > top {
				best, top, found = i, v, true
			}
		}
		if !found {
			return 0, false
		}
		picked |= 1 << best
	}
	return picked, true
}
