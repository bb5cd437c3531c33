package etcd

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/distlock/lock/driver"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// watchRetry is the pause before a key's watch is made again after it
// ended (a compaction past its revision, a cancellation by the server).
const watchRetry = 100 * time.Millisecond

// watchWait bounds how long Watch waits for a key's watch to be in place.
// Past it, Watch fails and the waiter polls (package lock subscribes again
// soon): a cluster that cannot set up a watch must not hold waiters up.
const watchWait = 2 * time.Second

// watcher announces the deletions of keys (releases and expiries) to the
// client's waiters. It keeps one etcd watch per key that someone waits
// for, all on one gRPC stream (clientv3 puts the watches made with one
// context on one stream), on a client of every member: when the stream's
// member fails, clientv3 moves the stream to another and resumes each
// watch from the revision after the last it delivered, so no deletion is
// missed. It starts at the first wait.
type watcher struct {
	client func(context.Context) (*clientv3.Client, error) // the client of every member

	mu      sync.Mutex
	ctx     context.Context // the stream's; ends at close
	stop    context.CancelFunc
	keys    map[string]*keyWatch // the etcd watch of each key waited for
	subs    driver.Subscribers   // the waiters' channels, by key
	wg      sync.WaitGroup
	stopped bool
}

// keyWatch is the etcd watch of one key, shared by the key's waiters.
type keyWatch struct {
	key     string
	cancel  context.CancelFunc
	created chan struct{} // closed once the watch is in place (or ended)
}

func newWatcher(client func(context.Context) (*clientv3.Client, error)) *watcher {
	ctx, stop := context.WithCancel(context.Background())
	return &watcher{client: client, ctx: ctx, stop: stop, keys: make(map[string]*keyWatch)}
}

// watch subscribes to deletions of key. It returns once the key's watch is
// in place, so that no deletion after it returns is missed.
func (w *watcher) watch(ctx context.Context, key string) (driver.Watch, error) {
	cli, err := w.client(ctx)
	if err != nil {
		return nil, err
	}
	sub := &watch{w: w, key: key, c: make(chan struct{}, 1)}
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return nil, errClosed
	}
	if w.subs.Add(key, sub.c) {
		kctx, cancel := context.WithCancel(w.ctx)
		kw := &keyWatch{key: key, cancel: cancel, created: make(chan struct{})}
		w.keys[key] = kw
		w.wg.Go(func() { w.run(kctx, cli, key, kw) })
	}
	kw := w.keys[key]
	w.mu.Unlock()
	t := time.NewTimer(watchWait)
	defer t.Stop()
	select {
	case <-kw.created:
		return sub, nil
	case <-t.C:
		sub.Close()
		return nil, errors.New("the watch of the key was not in place within " + watchWait.String())
	case <-ctx.Done():
		sub.Close()
		return nil, ctx.Err()
	}
}

// run keeps the watch of key until ctx ends, waking the key's waiters at
// each deletion. If the watch ends otherwise, it wakes them all (a
// deletion may have gone by) and makes it again, from the revision after
// the last one seen.
func (w *watcher) run(ctx context.Context, cli *clientv3.Client, key string, kw *keyWatch) {
	var created bool
	var next int64 // the revision to resume from; 0: the current one
	defer func() {
		if !created {
			close(kw.created)
		}
	}()
	for ctx.Err() == nil {
		opts := []clientv3.OpOption{clientv3.WithFilterPut(), clientv3.WithCreatedNotify()}
		if next > 0 {
			opts = append(opts, clientv3.WithRev(next))
		}
		for resp := range cli.Watch(ctx, key, opts...) {
			if resp.CompactRevision != 0 {
				next = 0 // resume from now on: the wake-up below covers the gap
				break
			}
			if resp.Header.Revision > 0 {
				next = resp.Header.Revision + 1
			}
			if resp.Created && !created {
				created = true
				close(kw.created)
			}
			if len(resp.Events) > 0 {
				w.wake(kw)
			}
		}
		if ctx.Err() != nil {
			return
		}
		w.wake(kw)
		pause(ctx, watchRetry)
	}
}

// wake wakes every waiter of kw, while kw is the key's watch.
func (w *watcher) wake(kw *keyWatch) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.keys[kw.key] == kw {
		w.subs.Wake(kw.key)
	}
}

// close ends every watch and waits for them.
func (w *watcher) close() {
	w.mu.Lock()
	w.stopped = true
	w.stop()
	w.mu.Unlock()
	w.wg.Wait()
}

// watch is one waiter's subscription to deletions of a key.
type watch struct {
	w   *watcher
	key string
	c   chan struct{}
}

var _ driver.Watch = (*watch)(nil)

// Released returns the channel that receives a value after the key was
// deleted.
func (s *watch) Released() <-chan struct{} { return s.c }

// Close ends the subscription, and the key's etcd watch with its last
// subscriber. Closing it again does nothing.
func (s *watch) Close() error {
	w := s.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.subs.Remove(s.key, s.c) {
		w.keys[s.key].cancel()
		delete(w.keys, s.key)
	}
	return nil
}
