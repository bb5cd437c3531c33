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

// run polls while keys are watched, until the connection closes.
func (p *poller) run() {
	defer close(p.done)
	delay := pollMin
	timer := time.NewTimer(delay)
	defer timer.Stop()
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
			continue // idle until the next watch kicks
		}
		free, err := p.free(keys)
		if err != nil || len(free) == 0 {
			delay = min(2*delay, pollMax)
		} else {
			delay = pollMin
			p.mu.Lock()
			for _, k := range free {
				p.subs.Wake(k)
			}
			p.mu.Unlock()
		}
		timer.Reset(delay)
	}
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

// free returns which of keys nobody holds, asking pollBatch keys a round
// trip.
func (p *poller) free(keys []string) ([]string, error) {
	ctx, cancel := context.WithTimeout(p.ctx, p.c.timeout)
	defer cancel()
	var free []string
	args := make([]any, pollBatch)
	for len(keys) > 0 {
		batch := keys[:min(len(keys), pollBatch)]
		keys = keys[len(batch):]
		for i := range args {
			args[i] = batch[min(i, len(batch)-1)]
		}
		held, err := p.held(ctx, args)
		if err != nil {
			return free, err
		}
		for _, k := range batch {
			if !held[k] {
				free = append(free, k)
			}
		}
	}
	return free, nil
}

// held runs the poll statement on args and returns the keys held.
func (p *poller) held(ctx context.Context, args []any) (map[string]bool, error) {
	rows, err := p.c.st.poll.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	held := make(map[string]bool)
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		held[k] = true
	}
	return held, rows.Err()
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
