package driver

// Subscribers is a set of channels by key: the waiters a driver wakes when
// it learns of a key's release. Each waiter adds a channel of capacity one
// for its key, and removes it when its [Watch] closes. [Subscribers.Wake]
// sends on each of the key's channels without blocking, so a waiter that
// has not yet taken the last wake-up simply keeps it, and a slow waiter
// never holds up the driver.
//
// The zero value is an empty set, ready to use. A Subscribers is not safe
// for concurrent use: guard it with the mutex that guards the state it
// goes with (a closed flag, the backend's watch of the key).
type Subscribers struct {
	m map[string]map[chan<- struct{}]struct{}
}

// Add adds c to key's channels. It reports whether c is the key's first
// channel, so that a driver can start watching the key in the backend.
func (s *Subscribers) Add(key string, c chan<- struct{}) (first bool) {
	if s.m == nil {
		s.m = make(map[string]map[chan<- struct{}]struct{})
	}
	set := s.m[key]
	if set == nil {
		set = make(map[chan<- struct{}]struct{})
		s.m[key] = set
	}
	set[c] = struct{}{}
	return len(set) == 1
}

// Remove removes c from key's channels. It reports whether c was the
// key's last channel, so that a driver can stop watching the key. Removing
// a channel that is not there does nothing and reports false.
func (s *Subscribers) Remove(key string, c chan<- struct{}) (last bool) {
	set := s.m[key]
	if _, ok := set[c]; !ok {
		return false
	}
	delete(set, c)
	if len(set) > 0 {
		return false
	}
	delete(s.m, key)
	return true
}

// Wake wakes key's channels without blocking.
func (s *Subscribers) Wake(key string) {
	for c := range s.m[key] {
		Signal(c)
	}
}

// WakeAll wakes every channel of every key, for a driver that may have
// missed releases (while it reconnected, say) and cannot tell which.
func (s *Subscribers) WakeAll() {
	for _, set := range s.m {
		for c := range set {
			Signal(c)
		}
	}
}

// Signal sends a value on c unless c is full: the non-blocking wake-up of
// one waiter. On a channel of capacity one, several signals before the
// waiter looks read as one, which is all that [Watch.Released] promises.
func Signal(c chan<- struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
