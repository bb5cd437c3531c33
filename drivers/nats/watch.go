package nats

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/nats-io/nats.go/jetstream"
)

// watchWait bounds how long Watch waits for the client's watch to be in
// place. Past it, Watch fails and the waiter polls.
const watchWait = 2 * time.Second

// watcher announces releases and expiries to the client's waiters with
// one KV watch of the whole bucket (an ordered consumer of its new
// messages, without their values), made at the first wait. It wakes a
// key's waiters at each purge, delete or expiry marker of the key, after
// making the marker's revision the key's hint, so that a woken waiter
// writes on it at once, as the releasing client would. The
// consumer resumes after the last message it delivered when its server
// changes; after a reconnection, when a marker may have gone by, every
// waiter is woken.
type watcher struct {
	c *conn

	mu      sync.Mutex
	subs    driver.Subscribers
	keys    map[string]bool // the keys that subs holds waiters of
	start   *watchStart     // the watch being made or in place; nil: none
	stopped bool
	wg      sync.WaitGroup
}

// watchStart is one making of the bucket's watch.
type watchStart struct {
	done chan struct{} // closed once the watch is in place, or failed
	kw   jetstream.KeyWatcher
	err  error
}

func newWatcher(c *conn) *watcher { return &watcher{c: c} }

// watch subscribes to releases of the key whose encoding is key. It
// returns once the bucket's watch is in place.
func (w *watcher) watch(ctx context.Context, key string) (driver.Watch, error) {
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return nil, errClosed
	}
	st := w.start
	if st == nil {
		st = &watchStart{done: make(chan struct{})}
		w.start = st
		w.wg.Go(func() { w.run(st) })
	}
	w.mu.Unlock()
	t := time.NewTimer(watchWait)
	defer t.Stop()
	select {
	case <-st.done:
	case <-t.C:
		return nil, errors.New("the bucket's watch was not in place within " + watchWait.String())
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	if st.err != nil {
		return nil, st.err
	}
	sub := &watch{w: w, key: key, c: make(chan struct{}, 1)}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return nil, errClosed
	}
	if w.subs.Add(key, sub.c) {
		if w.keys == nil {
			w.keys = make(map[string]bool)
		}
		w.keys[key] = true
	}
	return sub, nil
}

// run makes the bucket's watch and wakes waiters at each marker until
// the watch ends. Then it wakes them all, and the next wait makes it
// again.
func (w *watcher) run(st *watchStart) {
	ctx := w.c.ctx
	kv, err := w.c.js.KeyValue(ctx, w.c.cfg.Bucket)
	if err == nil {
		st.kw, err = kv.WatchAll(ctx, jetstream.UpdatesOnly(), jetstream.MetaOnly())
	}
	st.err = err
	close(st.done)
	if err != nil {
		w.forget(st)
		return
	}
	for e := range st.kw.Updates() {
		if e == nil || e.Operation() == jetstream.KeyValuePut {
			continue
		}
		// The marker's revision is the condition of the next acquisition
		// of the key: set it before the waiters wake.
		w.c.hints.set(w.c.pre+e.Key(), e.Revision())
		w.mu.Lock()
		w.subs.Wake(e.Key())
		w.mu.Unlock()
	}
	w.forget(st)
	w.wakeAll()
}

// running reports whether the bucket's watch is being made or in place.
func (w *watcher) running() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.start != nil
}

// waited reports whether a waiter of the client watches the key whose
// encoding is key.
func (w *watcher) waited(key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.keys[key]
}

// forget drops st, so that the next wait makes the watch again.
func (w *watcher) forget(st *watchStart) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.start == st {
		w.start = nil
	}
}

// wakeAll wakes every waiter: releases may have gone by unseen.
func (w *watcher) wakeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.subs.WakeAll()
}

// close stops the watch and waits for it.
func (w *watcher) close() {
	w.mu.Lock()
	w.stopped = true
	st := w.start
	w.mu.Unlock()
	if st != nil {
		<-st.done
		if st.kw != nil {
			st.kw.Stop()
		}
	}
	w.wg.Wait()
}

// watch is one waiter's subscription to releases of a key.
type watch struct {
	w   *watcher
	key string
	c   chan struct{}
}

var _ driver.Watch = (*watch)(nil)

// Released returns the channel that receives a value after the key was
// released or expired.
func (s *watch) Released() <-chan struct{} { return s.c }

// Close ends the subscription. Closing it again does nothing.
func (s *watch) Close() error {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	if s.w.subs.Remove(s.key, s.c) {
		delete(s.w.keys, s.key)
	}
	return nil
}
