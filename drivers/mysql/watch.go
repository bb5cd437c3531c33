package mysql

import (
	"context"
	"sync"
	"time"

	"github.com/distlock/lock/driver"
)

// The poller's pace. After a watch begins, or after it found a key free,
// it polls again pollMin later, and doubles the delay, up to pollMax,
// while every watched key stays held or the poll fails.
const (
	pollMin = 2 * time.Millisecond
	pollMax = 100 * time.Millisecond
)

// poller wakes a connection's waiters. MySQL has no NOTIFY, so one
// goroutine per connection asks the server which of the watched keys are
// held, in one read of up to pollBatch keys a round trip, and wakes the
// waiters of the others. It starts at the first Watch and stops with the
// connection. See "Wake-ups" in DESIGN.md.
type poller struct {
	c      *conn
	kick   chan struct{} // a watch began: poll soon
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when run returns

	mu      sync.Mutex
	subs    driver.Subscribers
	keys    map[string]int // the watched keys, and how many watches each
	started bool
	closed  bool
}

func newPoller(c *conn) *poller {
	ctx, cancel := context.WithCancel(context.Background())
	return &poller{c: c, kick: make(chan struct{}, 1), ctx: ctx, cancel: cancel, done: make(chan struct{}), keys: make(map[string]int)}
}

// Watch subscribes to releases of key. The subscription is in place at
// once: the poller's next look at the key comes after the call.
func (c *conn) Watch(ctx context.Context, key string) (driver.Watch, error) {
	return c.poller.watch(key)
}

func (p *poller) watch(key string) (driver.Watch, error) {
	ch := make(chan struct{}, 1)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errClosed
	}
	p.subs.Add(key, ch)
	p.keys[key]++
	if !p.started {
		p.started = true
		go p.run()
	}
	p.mu.Unlock()
	driver.Signal(p.kick)
	return &watch{p: p, key: key, ch: ch}, nil
}

// run polls while keys are watched, until the connection closes. A key
// found free wakes its waiters. So does a key held under another grant
// than at the last poll: it was released and taken again in between, so
// it changes hands often, and a waiter that tries at once may find it
// free. A waiter woken only when a poll finds the key free tries too late
// against a holder that takes the key again as soon as it releases it.
// Either resets the delay to pollMin. While every key stays under the same
// grant, the delay doubles up to pollMax, and never runs past the end of
// the grant that ends first.
func (p *poller) run() {
	defer close(p.done)
	delay := pollMin
	timer := time.NewTimer(delay)
	defer timer.Stop()
	seen := make(map[string]uint64) // the fence of each key's grant at the last poll
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-p.kick:
			delay = pollMin
			timer.Reset(delay)
			continue
		case <-timer.C:
		}
		keys := p.watched()
		if len(keys) == 0 {
			clear(seen)
			continue // idle until the next watch kicks
		}
		held, err := p.held(keys)
		if err != nil {
			delay = min(2*delay, pollMax)
			timer.Reset(delay)
			continue
		}
		var wake []string
		next := min(2*delay, pollMax)
		for _, k := range keys {
			g, ok := held[k]
			last, known := seen[k]
			switch {
			case !ok:
				delete(seen, k)
				wake = append(wake, k)
			case known && g.fence != last:
				seen[k] = g.fence
				wake = append(wake, k)
			default:
				seen[k] = g.fence
				next = min(next, max(g.left, pollMin))
			}
		}
		if len(seen) > 2*len(keys) {
			seen = prune(seen, keys)
		}
		if len(wake) > 0 {
			next = pollMin
			p.mu.Lock()
			for _, k := range wake {
				p.subs.Wake(k)
			}
			p.mu.Unlock()
		}
		delay = next
		timer.Reset(delay)
	}
}

// prune returns the entries of seen for keys only.
func prune(seen map[string]uint64, keys []string) map[string]uint64 {
	kept := make(map[string]uint64, len(keys))
	for _, k := range keys {
		if f, ok := seen[k]; ok {
			kept[k] = f
		}
	}
	return kept
}

// watched returns the keys watched now.
func (p *poller) watched() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := make([]string, 0, len(p.keys))
	for k := range p.keys {
		keys = append(keys, k)
	}
	return keys
}

// grant is what a poll learns of a held key.
type grant struct {
	fence uint64
	left  time.Duration // until the grant ends, by the server's clock
}

// held returns which of keys are held, and under which grant, asking
// pollBatch keys a round trip.
func (p *poller) held(keys []string) (map[string]grant, error) {
	ctx, cancel := context.WithTimeout(p.ctx, p.c.timeout)
	defer cancel()
	held := make(map[string]grant)
	args := make([]any, pollBatch)
	for len(keys) > 0 {
		batch := keys[:min(len(keys), pollBatch)]
		keys = keys[len(batch):]
		for i := range args {
			args[i] = batch[min(i, len(batch)-1)]
		}
		if err := p.poll(ctx, args, held); err != nil {
			return nil, err
		}
	}
	return held, nil
}

// poll runs the poll statement on args, adding the keys held to held.
func (p *poller) poll(ctx context.Context, args []any, held map[string]grant) error {
	rows, err := p.c.st.poll.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			k  string
			g  grant
			us int64
		)
		if err := rows.Scan(&k, &g.fence, &us); err != nil {
			return err
		}
		g.left = time.Duration(max(us, 0)) * time.Microsecond
		held[k] = g
	}
	return rows.Err()
}

// close stops the poller and waits for it.
func (p *poller) close() {
	p.mu.Lock()
	p.closed = true
	started := p.started
	p.mu.Unlock()
	p.cancel()
	if started {
		<-p.done
	}
}

// watch is one subscription to a key's releases.
type watch struct {
	p    *poller
	key  string
	ch   chan struct{}
	once sync.Once
}

func (w *watch) Released() <-chan struct{} { return w.ch }

func (w *watch) Close() error {
	w.once.Do(func() {
		w.p.mu.Lock()
		defer w.p.mu.Unlock()
		w.p.subs.Remove(w.key, w.ch)
		if w.p.keys[w.key]--; w.p.keys[w.key] <= 0 {
			delete(w.p.keys, w.key)
		}
	})
	return nil
}
