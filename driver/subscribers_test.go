package driver_test

import (
	"testing"

	"github.com/distlock/lock/driver"
)

// woken reports whether c holds a wake-up, and takes it.
func woken(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// TestSubscribers_wakeReachesTheKeyOnly adds two channels for one key and
// one for another: Wake wakes the key's channels only, twice in a row
// without blocking, and WakeAll wakes all three.
func TestSubscribers_wakeReachesTheKeyOnly(t *testing.T) {
	var s driver.Subscribers
	a, b, other := make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{}, 1)
	if !s.Add("k", a) {
		t.Error("Add of k's first channel reported first = false")
	}
	if s.Add("k", b) {
		t.Error("Add of k's second channel reported first = true")
	}
	s.Add("j", other)
	s.Wake("k")
	s.Wake("k") // the channels are full: it must not block
	if !woken(a) || !woken(b) || woken(other) {
		t.Error("Wake(k) did not wake exactly k's channels")
	}
	s.WakeAll()
	if !woken(a) || !woken(b) || !woken(other) {
		t.Error("WakeAll did not wake every channel")
	}
}

// TestSubscribers_removeReportsTheLast removes a key's channels one by
// one: only the last removal reports last, a removed channel is not woken,
// and removing it again, or from an empty set, does nothing.
func TestSubscribers_removeReportsTheLast(t *testing.T) {
	var s driver.Subscribers
	if s.Remove("k", make(chan struct{}, 1)) {
		t.Error("Remove from an empty set reported last = true")
	}
	a, b := make(chan struct{}, 1), make(chan struct{}, 1)
	s.Add("k", a)
	s.Add("k", b)
	if s.Remove("k", a) {
		t.Error("Remove of one of two channels reported last = true")
	}
	s.Wake("k")
	if woken(a) || !woken(b) {
		t.Error("Wake after Remove woke the removed channel, or not the other")
	}
	if s.Remove("k", a) {
		t.Error("a second Remove of a channel reported last = true")
	}
	if !s.Remove("k", b) {
		t.Error("Remove of the last channel reported last = false")
	}
	if !s.Add("k", a) {
		t.Error("Add after the last Remove reported first = false")
	}
}

// TestSignal_neverBlocks signals a full channel.
func TestSignal_neverBlocks(t *testing.T) {
	c := make(chan struct{}, 1)
	driver.Signal(c)
	driver.Signal(c)
	if !woken(c) || woken(c) {
		t.Error("two signals did not leave exactly one value")
	}
}
