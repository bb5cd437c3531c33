package redlock

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distlock/lock/driver"
)

// subscriptions multiplexes the watchers of one Redlock over one
// publish/subscribe connection per node, opened at the first Watch.
type subscriptions struct {
	r *Redlock

	mu       sync.Mutex
	watchers map[string]map[*watch]struct{} // by channel
	news     map[string]news                // by watched channel
	nodes    []*nodeSub                     // nil until the first Watch
	closed   bool

	nchans atomic.Int32 // len(watchers), read without mu

	ctx    context.Context // ends the connection loops
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// news is what a client heard on one watched channel.
type news struct {
	heard uint64 // announcements received
	tried uint64 // heard, when the client last tried the channel's key
	from  int    // the node that sent the latest announcement
}

func newSubscriptions(r *Redlock) *subscriptions {
	ctx, cancel := context.WithCancel(context.Background())
	return &subscriptions{
		r:        r,
		watchers: make(map[string]map[*watch]struct{}),
		news:     make(map[string]news),
		ctx:      ctx,
		cancel:   cancel,
	}
}

// Watch subscribes to releases of key on every node, and returns once a
// quorum of nodes confirmed the subscription.
func (r *Redlock) Watch(ctx context.Context, key string) (driver.Watch, error) {
	s := r.subs
	ch := r.channel(key)
	w := &watch{s: s, ch: ch, c: make(chan struct{}, 1), done: make(chan struct{})}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, fmt.Errorf("redlock: watch on a closed connection")
	}
	if s.nodes == nil {
		for i, n := range r.nodes {
			ns := &nodeSub{s: s, node: n, i: i}
			s.nodes = append(s.nodes, ns)
			s.wg.Add(1)
			go ns.run()
		}
	}
	ws := s.watchers[ch]
	if ws == nil {
		ws = make(map[*watch]struct{})
		s.watchers[ch] = ws
		s.nchans.Add(1)
	}
	ws[w] = struct{}{}
	nodes := s.nodes
	s.mu.Unlock()

	// A release is announced by one node (see Release): wait for as many
	// confirmations as there are nodes whose connection is up, not just a
	// quorum, so that the call's next attempt does not run ahead of the
	// subscription on the node that will announce; a node that is down or
	// slow to confirm delays it by the timer at most, if a quorum confirmed.
	confirmed := make(chan struct{}, len(nodes))
	quorum := len(nodes)/2 + 1
	up := 0
	for _, ns := range nodes {
		done, connected := ns.want(ch)
		if connected {
			up++
		}
		go func() {
			select {
			case <-done:
				confirmed <- struct{}{}
			case <-w.done:
			}
		}()
	}
	want := max(quorum, up)
	t := time.NewTimer(max(r.roundTimeout(0), 100*time.Millisecond))
	defer t.Stop()
	for got := 0; got < want; {
		select {
		case <-confirmed:
			got++
		case <-ctx.Done():
			w.Close()
			return nil, ctx.Err()
		case <-t.C:
			if got >= quorum {
				return w, nil
			}
			w.Close()
			return nil, fmt.Errorf("redlock: fewer than %d of %d nodes confirmed the subscription in time", quorum, len(nodes))
		}
	}
	return w, nil
}

// announce passes on an announcement, received from node from, of the
// release of value on channel. A release is announced by one node, or by
// several when that one could not (see Release): value wakes a watcher
// once, so that the other nodes' announcements do not make it try again
// for the same release (but see rewake).
func (s *subscriptions) announce(from int, channel, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ws := s.watchers[channel]; ws != nil {
		n := s.news[channel]
		n.heard++
		n.from = from
		s.news[channel] = n
		signal(ws, value)
	}
}

// announcements is called as an attempt on key begins. It returns key's
// channel, how many announcements it has received, whether some came since
// the client's last attempt (the attempt follows a release) and, if so,
// the node that sent the latest; or watched=false if it has no watchers.
// It is cheap when nothing is watched.
func (s *subscriptions) announcements(key string) (ch string, n uint64, from int, fresh, watched bool) {
	if s.nchans.Load() == 0 {
		return "", 0, 0, false, false
	}
	ch = s.r.channel(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.watchers[ch]; !ok {
		return "", 0, 0, false, false
	}
	nw := s.news[ch]
	fresh = nw.heard != nw.tried
	nw.tried = nw.heard
	s.news[ch] = nw
	return ch, nw.heard, nw.from, fresh, true
}

// rewake is called when an attempt of this client found the key of ch
// held, and n is how many announcements ch had received when the attempt
// began. Woken by the first node to announce a release, the attempt may
// have reached other nodes before the release did: the watchers forget the
// value that woke them, so that the release's announcements still to come
// wake them again, and are woken at once if announcements came in during
// the attempt.
func (s *subscriptions) rewake(ch string, n uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ws := s.watchers[ch]
	for w := range ws {
		w.last = ""
	}
	if s.news[ch].heard != n {
		signal(ws, "")
	}
}

// wakeAll signals every watcher.
func (s *subscriptions) wakeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ws := range s.watchers {
		signal(ws, "")
	}
}

// signal signals the watchers ws of a release of value ("" if unknown),
// skipping those that value woke already. The subscriptions' mu must be
// held.
func signal(ws map[*watch]struct{}, value string) {
	for w := range ws {
		if value != "" {
			if w.last == value {
				continue
			}
			w.last = value
		}
		select {
		case w.c <- struct{}{}:
		default:
		}
	}
}

// watched reports whether channel has watchers.
func (s *subscriptions) watched(channel string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.watchers[channel]) > 0
}

// channels returns the channels that have watchers.
func (s *subscriptions) channels() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	chs := make([]string, 0, len(s.watchers))
	for ch := range s.watchers {
		chs = append(chs, ch)
	}
	return chs
}

func (s *subscriptions) close() {
	s.mu.Lock()
	s.closed = true
	nodes := s.nodes
	s.mu.Unlock()
	s.cancel()
	for _, ns := range nodes {
		ns.mu.Lock()
		if ns.sub != nil {
			ns.sub.Close() // makes a blocked Receive return
		}
		ns.mu.Unlock()
	}
	s.wg.Wait()
}

// watch is one waiter's subscription.
type watch struct {
	s    *subscriptions
	ch   string
	c    chan struct{} // Released
	done chan struct{} // closed by Close
	once sync.Once
	last string // the value whose release last woke the watcher; guarded by s.mu
}

func (w *watch) Released() <-chan struct{} { return w.c }

// Close removes the watcher, and unsubscribes from its channel if it was
// the last one.
func (w *watch) Close() error {
	w.once.Do(func() {
		close(w.done)
		s := w.s
		s.mu.Lock()
		ws := s.watchers[w.ch]
		delete(ws, w)
		last := len(ws) == 0
		if last {
			delete(s.watchers, w.ch)
			delete(s.news, w.ch)
			s.nchans.Add(-1)
		}
		nodes := s.nodes
		s.mu.Unlock()
		if last {
			for _, ns := range nodes {
				ns.drop(w.ch)
			}
		}
	})
	return nil
}

// nodeSub is the publish/subscribe connection to one node, reopened when
// it fails. Requests are counted per channel and connection: each
// SUBSCRIBE is confirmed by one message, in order, so a SUBSCRIBE is
// confirmed once the channel's confirmations catch up with it.
type nodeSub struct {
	s    *subscriptions
	node Node
	i    int // the node's index

	mu    sync.Mutex
	sub   Subscriber // nil while (re)connecting
	chans map[string]*chanState
	waits []ackWait
}

// chanState is what one connection knows of one channel.
type chanState struct {
	active bool // the latest request sent was SUBSCRIBE
	sent   int  // SUBSCRIBEs sent
	acked  int  // confirmations received
}

type ackWait struct {
	ch   string
	n    int // confirmed once the channel's acked reaches n; 0: not yet sent
	done chan struct{}
}

// want makes sure the connection subscribes to ch, and returns a channel
// that is closed once the node confirmed it, and whether the connection is
// up.
func (ns *nodeSub) want(ch string) (done chan struct{}, connected bool) {
	done = make(chan struct{})
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if ns.sub == nil {
		// The loop subscribes to every watched channel once connected.
		ns.waits = append(ns.waits, ackWait{ch: ch, done: done})
		return done, false
	}
	st := ns.chans[ch]
	if st == nil || !st.active {
		st = ns.send(ch)
	}
	if st != nil && st.acked >= st.sent {
		close(done)
	} else if st != nil {
		ns.waits = append(ns.waits, ackWait{ch: ch, n: st.sent, done: done})
	}
	return done, st != nil
}

// send sends SUBSCRIBE ch and returns the channel's state, or nil if the
// connection failed. ns.mu must be held and ns.sub set.
func (ns *nodeSub) send(ch string) *chanState {
	if err := ns.sub.Subscribe(ns.s.ctx, ch); err != nil {
		ns.sub.Close() // the loop sees the failure and reconnects
		return nil
	}
	st := ns.chans[ch]
	if st == nil {
		st = &chanState{}
		ns.chans[ch] = st
	}
	st.active = true
	st.sent++
	return st
}

// drop unsubscribes from ch, which has no watchers left.
func (ns *nodeSub) drop(ch string) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	st := ns.chans[ch]
	if ns.sub == nil || st == nil || !st.active || ns.s.watched(ch) {
		return
	}
	if err := ns.sub.Unsubscribe(ns.s.ctx, ch); err != nil {
		ns.sub.Close()
		return
	}
	st.active = false
	if st.acked >= st.sent {
		delete(ns.chans, ch)
	}
}

// ack counts a confirmation of ch and releases the waits it satisfies.
func (ns *nodeSub) ack(ch string) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	st := ns.chans[ch]
	if st == nil {
		return
	}
	st.acked++
	if !st.active && st.acked >= st.sent {
		delete(ns.chans, ch)
	}
	kept := ns.waits[:0]
	for _, w := range ns.waits {
		if w.ch == ch && w.n > 0 && st.acked >= w.n {
			close(w.done)
		} else {
			kept = append(kept, w)
		}
	}
	clear(ns.waits[len(kept):])
	ns.waits = kept
}

// run keeps the connection open, subscribed to every watched channel, and
// passes its messages on, until the subscriptions are closed.
func (ns *nodeSub) run() {
	defer ns.s.wg.Done()
	ctx := ns.s.ctx
	delay := 50 * time.Millisecond
	for ctx.Err() == nil {
		sub, err := ns.node.Subscribe(ctx)
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(delay):
			}
			delay = min(2*delay, 2*time.Second)
			continue
		}
		ns.mu.Lock()
		ns.sub, ns.chans = sub, make(map[string]*chanState)
		for _, ch := range ns.s.channels() {
			ns.send(ch)
		}
		// Waits from an earlier connection wait for this one's SUBSCRIBE;
		// those whose channel lost its watchers meanwhile end now.
		kept := ns.waits[:0]
		for _, w := range ns.waits {
			if st := ns.chans[w.ch]; st != nil {
				w.n = st.sent
				kept = append(kept, w)
			} else {
				close(w.done)
			}
		}
		clear(ns.waits[len(kept):])
		ns.waits = kept
		ns.mu.Unlock()
		if ctx.Err() != nil { // closed while connecting
			sub.Close()
			return
		}
		delay = 50 * time.Millisecond
		for {
			ev, err := sub.Receive(ctx)
			if err != nil {
				break
			}
			switch ev.Kind {
			case Subscribed:
				ns.ack(ev.Channel)
			case Message:
				ns.s.announce(ns.i, ev.Channel, ev.Payload)
			}
		}
		ns.mu.Lock()
		ns.sub = nil
		ns.mu.Unlock()
		sub.Close()
		// Releases may have gone unannounced while the connection was down.
		ns.s.wakeAll()
	}
}
