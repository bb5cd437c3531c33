package zookeeper

import (
	"context"
	"errors"

	"github.com/distlock/lock/driver"
	"github.com/go-zookeeper/zk"
)

// watch is a subscription to the releases of one key, through the base
// session. It watches the key's holder only, the lowest attempt (the one
// each waiter would follow in ZooKeeper's recipe): one event per release
// per client, whatever the number of attempts that come and go. While the
// key is free it watches the key's children, to learn of the next holder.
type watch struct {
	cn       *conn
	parent   string
	released chan struct{}
	cancel   context.CancelFunc
	done     chan struct{}
}

var _ driver.Watch = (*watch)(nil)

// Watch subscribes to releases of key; it returns once the first ZooKeeper
// watch is set.
func (cn *conn) Watch(ctx context.Context, key string) (driver.Watch, error) {
	cn.mu.Lock()
	if cn.closed {
		cn.mu.Unlock()
		return nil, errClosed
	}
	cn.work.Add(1)
	cn.mu.Unlock()
	wctx, cancel := context.WithCancel(cn.ctx)
	w := &watch{cn: cn, parent: cn.keyPath(key), released: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	actx, acancel := cn.bound(ctx)
	ev, err := w.arm(actx)
	acancel()
	if err != nil {
		cancel()
		cn.work.Done()
		return nil, wrap(ctx, "watch", err)
	}
	go func() {
		defer cn.work.Done()
		defer close(w.done)
		w.loop(wctx, ev)
	}()
	return w, nil
}

// arm sets a ZooKeeper watch: on the holder's node if the key is held, on
// the key's children if it is free, on the key's node if it does not
// exist. It reports a release it saw meanwhile.
func (w *watch) arm(ctx context.Context) (<-chan zk.Event, error) {
	s := w.cn.base
	for {
		kids, err := w.cn.children(ctx, s, w.parent)
		if err != nil {
			return nil, err
		}
		if low, ok := lowest(kids); ok {
			// Held: follow the holder only.
			path := w.parent + "/" + low.name
			got, err := retry(ctx, func() (watched, error) {
				ok, _, ev, err := s.zc.ExistsW(path)
				return watched{ok: ok, ev: ev}, err
			})
			if err != nil {
				return nil, err
			}
			if got.ok {
				return got.ev, nil
			}
			w.notify() // released as we looked
			continue
		}
		// Free: watch for the next attempt.
		got, err := retry(ctx, func() (watched, error) {
			kids, _, ev, err := s.zc.ChildrenW(w.parent)
			return watched{kids: kids, ev: ev}, err
		})
		if errors.Is(err, zk.ErrNoNode) {
			got, err = retry(ctx, func() (watched, error) {
				ok, _, ev, err := s.zc.ExistsW(w.parent)
				return watched{ok: ok, ev: ev}, err
			})
			if err == nil && got.ok {
				continue // made meanwhile
			}
			return got.ev, err
		}
		if err != nil {
			return nil, err
		}
		if !holds(got.kids) {
			return got.ev, nil
		}
		// Taken meanwhile: the children watch fires at the next change and
		// is then gone; follow the holder instead.
	}
}

// watched is what a call that sets a watch returns.
type watched struct {
	kids []string
	ok   bool
	ev   <-chan zk.Event
}

// loop waits for each ZooKeeper watch to fire, announces releases, and
// sets the next watch, until ctx ends.
func (w *watch) loop(ctx context.Context, ev <-chan zk.Event) {
	for try := 0; ; {
		select {
		case <-ctx.Done():
			return
		case e := <-ev:
			if e.Type == zk.EventNodeDeleted || e.Type == zk.EventNotWatching {
				// A release, or the watch lost with its session: either may
				// have freed the key.
				w.notify()
			}
		}
		for {
			actx, cancel := context.WithTimeout(ctx, w.cn.c.cfg.RequestTimeout)
			next, err := w.arm(actx)
			cancel()
			if err == nil {
				ev, try = next, 0
				break
			}
			if ctx.Err() != nil {
				return
			}
			w.notify() // cannot tell: let the waiter try
			if pause(ctx, try+4) != nil {
				return
			}
			try++
		}
	}
}

func (w *watch) notify() { driver.Signal(w.released) }

// Released returns the channel that receives a value after a release.
func (w *watch) Released() <-chan struct{} { return w.released }

// Close ends the subscription. The ZooKeeper watch last set stays with the
// server until it fires; the client then drops its event.
func (w *watch) Close() error {
	w.cancel()
	<-w.done
	return nil
}
