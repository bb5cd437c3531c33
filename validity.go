package lock

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// lockState is what a Lock knows of its lease. A Lock starts held and
// ends in one of the other states, once. An endCause adds the reason where
// a state has two.
type lockState uint32

const (
	held     lockState = iota // valid, as far as the Lock knows
	expired                   // its validity ran out (counted in Stats.Lost); the backend may still keep the lease, so Release still asks it to let go
	lost                      // the backend does not hold it; the endCause says why
	released                  // released, or handed over, by its holder
	closed                    // its client's Close released it, or tried to (causeNotReleased)
)

// ended reports whether s is a state in which the Lock is certainly not
// held by the backend, or can no longer ask it.
func (s lockState) ended() bool { return s >= lost }

// endCause is why a lock ended, where its state has two reasons.
type endCause uint32

const (
	causeNone        endCause = iota
	causeKnownLost            // lost: the backend said it does not hold the lock
	causeRanOut               // lost: given back after its validity ran out
	causeNotReleased          // closed: Close could not release it
)

// stateVar is a lockState and its endCause in one word, read without the
// Lock's mutex.
type stateVar struct{ v atomic.Uint32 }

func (s *stateVar) Load() lockState       { return lockState(s.v.Load() & 0xff) }
func (s *stateVar) Cause() endCause       { return endCause(s.v.Load() >> 8) }
func (s *stateVar) Store(state lockState) { s.v.Store(uint32(state)) }
func (s *stateVar) StoreCause(state lockState, why endCause) {
	s.v.Store(uint32(state) | uint32(why)<<8)
}
func (s *stateVar) CompareAndSwap(old, new lockState) bool {
	return s.v.CompareAndSwap(uint32(old), uint32(new))
}

// ValidUntil returns the instant until which the lock is certainly held,
// on this process's monotonic clock. It is the clock reading taken before
// the request was sent, plus the TTL, minus the drift allowance. Compare
// it with time.Now() only (its wall clock reading is no guide). After a
// successful Release, it is the instant Release was called. Once the lock
// is known lost, it is no later than the instant that was learnt.
func (l *Lock) ValidUntil() time.Time {
	return l.start.Add(time.Duration(l.until.Load()))
}

// setUntil sets ValidUntil to t.
func (l *Lock) setUntil(t time.Time) { l.until.Store(int64(t.Sub(l.start))) }

// endBy moves ValidUntil back to t if it is later.
func (l *Lock) endBy(t time.Time) {
	if t.Before(l.ValidUntil()) {
		l.setUntil(t)
	}
}

// Done returns a channel that is closed when the lock ends. The lock ends
// when its validity passes without a successful [Lock.Extend], when it is
// known lost, when it is released, or when its client is closed. The
// validity passes at ValidUntil on this process's clock, whatever the
// backend does. [Lock.Err] then says which end it was. Stop touching the
// protected resource when Done is closed.
//
// The first call starts a timer for the lock's validity. A lock whose Done
// is never called costs nothing more.
func (l *Lock) Done() <-chan struct{} {
	e := &l.end
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ch == nil {
		e.ch = make(chan struct{})
		switch d := time.Until(l.ValidUntil()); {
		case e.over:
			close(e.ch)
		case d <= 0:
			l.runOut()
		default:
			e.timer = time.AfterFunc(d, l.timerFired)
		}
	}
	return e.ch
}

var (
	errValidityRanOut = fmt.Errorf("%w: its validity ran out", ErrLost)
	errKnownLost      = fmt.Errorf("%w: the backend no longer holds it (%w)", ErrLost, ErrNotHeld)
	errReleased       = fmt.Errorf("%w: released", ErrNotHeld)
)

// Err returns nil while the lock is valid. After that, it says why the
// lock ended. The error matches [ErrLost] if the validity ran out or the
// backend refused an extension. It matches [ErrNotHeld] if the lock was
// released, and [ErrClosed] if its client's Close released it.
func (l *Lock) Err() error {
	switch l.state.Load() {
	case held:
		if time.Now().Before(l.ValidUntil()) {
			return nil
		}
		return errValidityRanOut
	case expired:
		return errValidityRanOut
	case lost:
		if l.state.Cause() == causeRanOut {
			return errValidityRanOut
		}
		return errKnownLost
	case released:
		return errReleased
	}
	return ErrClosed
}

// lockEnd announces the end of a Lock to the callers of Done.
type lockEnd struct {
	mu    sync.Mutex
	ch    chan struct{} // made by the first Done
	timer *time.Timer   // fires at ValidUntil, while ch is open
	over  bool          // the end has been announced (ch closed, if made)
	// hook runs when the end is announced, under mu, so that Do's
	// function is cancelled by the timer's own goroutine rather than one
	// woken by the channel: on a loaded machine each wake-up can cost
	// milliseconds. It must not block.
	hook func()
}

// whenDone arranges for f to run the moment the lock ends, as Done is
// closed, or at once if it has ended. f runs with the end's mutex held,
// so it must be quick and must not call Done. It starts Done's timer.
func (l *Lock) whenDone(f func()) {
	l.Done()
	e := &l.end
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.over {
		f()
		return
	}
	if prev := e.hook; prev != nil {
		e.hook = func() { prev(); f() }
		return
	}
	e.hook = f
}

// timerFired runs when the timer of Done fires. It ends the lock if its
// validity has passed, and sets the timer again if an extension moved it.
func (l *Lock) timerFired() {
	e := &l.end
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.over {
		return
	}
	if d := time.Until(l.ValidUntil()); d > 0 {
		e.timer.Reset(d)
		return
	}
	l.runOut()
}

// runOut ends the lock whose validity passed without an extension,
// counting it lost. l.end.mu must be held.
func (l *Lock) runOut() {
	if l.state.CompareAndSwap(held, expired) {
		l.c.stats.lost.Add(1)
		l.c.lost(context.Background(), l.key, errValidityRanOut)
	}
	l.end.announce()
}

// announce closes the Done channel, if made, and stops its timer. e.mu
// must be held.
func (e *lockEnd) announce() {
	if e.over {
		return
	}
	e.over = true
	if e.ch != nil {
		close(e.ch)
	}
	if e.hook != nil {
		e.hook()
		e.hook = nil
	}
	if e.timer != nil {
		e.timer.Stop()
	}
}

// announceEnd announces the lock's end to the callers of Done.
func (l *Lock) announceEnd() {
	l.end.mu.Lock()
	defer l.end.mu.Unlock()
	l.end.announce()
}

// prolong moves ValidUntil to t, the validity of an extension that came
// back in time, and reports false, moving nothing, if the lock's end was
// announced meanwhile (its validity passed as the answer came in).
func (l *Lock) prolong(t time.Time) bool {
	e := &l.end
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.over {
		return false
	}
	l.setUntil(t)
	if e.timer != nil {
		e.timer.Reset(time.Until(t))
	}
	return true
}

// watchLost ends l as known lost when the driver closes signal
// (Lease.Lost), unless l ended first.
func (l *Lock) watchLost(signal <-chan struct{}) {
	select {
	case <-l.Done():
		return
	case <-signal:
	}
	e := &l.end
	e.mu.Lock()
	if l.state.CompareAndSwap(held, lost) {
		l.endBy(time.Now())
		l.c.stats.lost.Add(1)
		l.c.lost(context.Background(), l.key, errKnownLost)
	}
	e.announce()
	e.mu.Unlock()
	l.c.untrack(l)
}
