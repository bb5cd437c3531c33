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
			ns := newNodeSub(s, n, i)
			s.nodes = append(s.nodes, ns)
			s.wg.Add(2)
			go ns.run()
			go ns.write()
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
	// confirmations as there are healthy nodes that can be reached, not
	// just a quorum, so that the call's next attempt does not run ahead of
	// the subscription on the node that will announce. A node whose
	// connection is still being dialed counts: a client's first Watch
	// finds every connection so. A node that timed out since its last
	// answer, or that could not be dialed, is not waited for: a broken
	// minority must not slow every waiter down. One slow to confirm delays
	// Watch by the timer at most, if a quorum confirmed, and wakes the
	// watcher when it confirms (see lateConfirmations).
	confirmed := make(chan struct{}, len(nodes))
	late := &lateConfirmations{w: w}
	quorum := len(nodes)/2 + 1
	up := 0
	for _, ns := range nodes {
		c, reachable := ns.want(ch)
		if reachable && r.healthy(ns.i) {
			up++
		}
		go func() {
			gaveUp := c.gaveUp
			for {
				select {
				case <-c.done:
					late.confirm(confirmed, gaveUp == nil)
					return
				case <-gaveUp:
					late.count(confirmed)
					gaveUp = nil // and wait on for a confirmation, to wake the watcher
				case <-w.done:
					return
				}
			}
		}()
	}
	defer late.end()
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

// lateConfirmations wakes a watcher for each node that confirms its
// subscription after Watch returned. A release that node announced before
// its confirmation went unheard, and the watcher's next attempt may come
// only at its retry strategy's pace.
type lateConfirmations struct {
	w *watch

	mu    sync.Mutex
	ended bool // Watch returned
}

// count tells Watch, if it still waits, that a node will not confirm
// soon: it could not be reached.
func (l *lateConfirmations) count(confirmed chan<- struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ended {
		confirmed <- struct{}{} // buffered for every node
	}
}

// confirm passes on a node's confirmation: to Watch, through confirmed,
// while it waits (unless counted already told it about the node), and as
// a wake-up of the watcher afterwards.
func (l *lateConfirmations) confirm(confirmed chan<- struct{}, counted bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ended {
		if !counted {
			confirmed <- struct{}{} // buffered for every node
		}
		return
	}
	select {
	case l.w.c <- struct{}{}:
	default:
	}
}

// end is called as Watch returns.
func (l *lateConfirmations) end() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended = true
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
//
// If the attempt followed an announcement (fresh) and none came in during
// it, the watchers are woken once more after a while (after): a release
// is announced by one node, so nothing else would wake them before their
// retry strategy's next attempt, however long that is. (In make test, a
// candidate that polled once a minute missed an election that way: its
// attempt, woken by the resignation, reached three of five nodes before
// the release did.) The attempt that follows that wake-up is not fresh,
// and its refusal wakes nobody: a release costs each waiter that loses it
// one attempt more.
func (s *subscriptions) rewake(ch string, n uint64, fresh bool, after time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ws := s.watchers[ch]
	for w := range ws {
		w.last = ""
	}
	if s.news[ch].heard != n {
		signal(ws, "")
		return
	}
	if fresh {
		time.AfterFunc(after, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if !s.closed && s.news[ch].heard == n {
				signal(s.watchers[ch], "")
			}
		})
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
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, ns := range nodes {
			ns.mu.Lock()
			sub := ns.sub
			ns.mu.Unlock()
			if sub != nil {
				// Makes a blocked Receive return. A client may make it wait
				// for a dial in progress (go-redis does), hence the goroutine.
				go sub.Close()
			}
		}
		s.wg.Wait()
	}()
	// A loop dialing a hung node ends by its client's own dial and read
	// timeouts: Close does not wait for it past closeWait.
	t := time.NewTimer(closeWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// closeWait bounds how long Close waits for the subscriptions' connection
// loops to end.
const closeWait = time.Second

// watch is one waiter's subscription.
type watch struct {
	s    *subscriptions
	ch   string
	c    chan struct{} // Released
	done chan struct{} // closed by Close
	once sync.Once
	last string // the value whose release last woke the watcher; guarded by s.mu
}

// Released returns a channel that receives when a release of the key is
// announced.
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
//
// Callers never wait on the node: want and drop record what the node
// should be subscribed to, and the node's writer (see write) sends the
// requests, one at a time and each under the node's timeout, so that a
// hung node holds up nobody but its own writer.
type nodeSub struct {
	s    *subscriptions
	node Node
	i    int           // the node's index
	poke chan struct{} // wakes the writer; buffered

	mu         sync.Mutex
	sub        Subscriber // nil while (re)connecting
	dialFailed bool       // the latest connection failed before the node confirmed anything on it
	chans      map[string]*chanState
	waits      []ackWait
}

func newNodeSub(s *subscriptions, node Node, i int) *nodeSub {
	return &nodeSub{s: s, node: node, i: i, poke: make(chan struct{}, 1)}
}

// chanState is what one connection knows of one channel.
type chanState struct {
	active bool // the latest request sent was SUBSCRIBE
	sent   int  // SUBSCRIBEs sent
	acked  int  // confirmations received
}

type ackWait struct {
	ch string
	n  int // confirmed once the channel's acked reaches n; 0: not yet sent
	c  *confirmation
}

// confirmation is what Watch waits for from one node.
type confirmation struct {
	done   chan struct{} // closed once the node confirmed (or the watch closed)
	gaveUp chan struct{} // closed if the node could not be reached before that
	given  bool          // gaveUp is closed; guarded by the nodeSub's mu
}

// want makes sure the connection subscribes to ch, and returns the
// node's confirmation, and whether the node is reachable: its connection
// is up or being dialed, and its latest dial did not fail. It never waits
// on the node.
func (ns *nodeSub) want(ch string) (c *confirmation, reachable bool) {
	c = &confirmation{done: make(chan struct{}), gaveUp: make(chan struct{})}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if ns.sub == nil {
		// The writer subscribes to every watched channel once connected.
		ns.waits = append(ns.waits, ackWait{ch: ch, c: c})
		return c, !ns.dialFailed
	}
	switch st := ns.chans[ch]; {
	case st != nil && st.active && st.acked >= st.sent:
		close(c.done)
	case st != nil && st.active:
		ns.waits = append(ns.waits, ackWait{ch: ch, n: st.sent, c: c})
	default:
		ns.waits = append(ns.waits, ackWait{ch: ch, c: c})
		ns.wake()
	}
	return c, true
}

// drop unsubscribes from ch, which has no watchers left, in the
// background.
func (ns *nodeSub) drop(string) { ns.wake() }

// wake tells the writer that the subscriptions wanted changed.
func (ns *nodeSub) wake() {
	select {
	case ns.poke <- struct{}{}:
	default:
	}
}

// write is the node's writer: until the subscriptions are closed, it
// brings the connection's subscriptions in line with the watched
// channels each time it is woken.
func (ns *nodeSub) write() {
	defer ns.s.wg.Done()
	ctx := ns.s.ctx
	for {
		select {
		case <-ctx.Done():
			return
		case <-ns.poke:
		}
		for ns.sync(ctx) {
		}
	}
}

// sync sends the one request that the connection needs next, if any,
// and reports whether it sent one (more may be needed). The request is
// counted before it is sent, so that its confirmation, which the reader
// may receive before the writer returns, finds it counted; a request that
// fails closes the connection, whose successor starts its counts anew.
func (ns *nodeSub) sync(ctx context.Context) bool {
	ns.mu.Lock()
	sub := ns.sub
	ch, subscribe, ok := "", false, false
	if sub != nil {
		ch, subscribe, ok = ns.nextRequest()
	}
	if ok {
		ns.count(ch, subscribe)
	}
	ns.mu.Unlock()
	if !ok {
		return false
	}
	rctx, cancel := context.WithTimeout(ctx, max(ns.s.r.roundTimeout(0), DefaultNodeTimeout))
	defer cancel()
	var err error
	if subscribe {
		err = sub.Subscribe(rctx, ch)
	} else {
		err = sub.Unsubscribe(rctx, ch)
	}
	if err != nil {
		sub.Close() // the reader sees the failure and reconnects
		return false
	}
	return true
}

// count records a request about to be sent on the connection: a
// SUBSCRIBE to ch if subscribe, an UNSUBSCRIBE otherwise. ns.mu must be
// held.
func (ns *nodeSub) count(ch string, subscribe bool) {
	st := ns.chans[ch]
	if st == nil {
		st = &chanState{}
		ns.chans[ch] = st
	}
	st.active = subscribe
	if !subscribe {
		if st.acked >= st.sent {
			delete(ns.chans, ch)
		}
		return
	}
	st.sent++
	for i := range ns.waits {
		if w := &ns.waits[i]; w.ch == ch && w.n == 0 {
			w.n = st.sent
		}
	}
}

// nextRequest returns a channel whose subscription on the connection is
// not what the watchers want, and whether to subscribe to it or not.
// ns.mu must be held.
func (ns *nodeSub) nextRequest() (ch string, subscribe, ok bool) {
	for _, ch := range ns.s.channels() {
		if st := ns.chans[ch]; st == nil || !st.active {
			return ch, true, true
		}
	}
	for ch, st := range ns.chans {
		if st.active && !ns.s.watched(ch) {
			return ch, false, true
		}
	}
	// Waits for channels that lost their watchers meanwhile end now.
	ns.endWaits(func(w ackWait) bool { return w.n == 0 && !ns.s.watched(w.ch) })
	return "", false, false
}

// endWaits closes and drops the waits for which end is true. ns.mu must
// be held.
func (ns *nodeSub) endWaits(end func(ackWait) bool) {
	kept := ns.waits[:0]
	for _, w := range ns.waits {
		if end(w) {
			close(w.c.done)
		} else {
			kept = append(kept, w)
		}
	}
	clear(ns.waits[len(kept):])
	ns.waits = kept
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
	ns.endWaits(func(w ackWait) bool { return w.ch == ch && w.n > 0 && st.acked >= w.n })
}

// run keeps the connection open and passes its messages on, until the
// subscriptions are closed; the writer subscribes it to every watched
// channel. A connection that fails, or ends before the node confirmed
// anything on it, is reopened after 50ms, doubling up to 2s: some clients
// dial in Subscribe and fail there, others (go-redis) dial at the first
// SUBSCRIBE and end the connection when that fails.
func (ns *nodeSub) run() {
	defer ns.s.wg.Done()
	ctx := ns.s.ctx
	delay := 50 * time.Millisecond
	for ctx.Err() == nil {
		sub, err := ns.node.Subscribe(ctx)
		if err != nil {
			ns.unreachable()
			delay = backOff(ctx, delay)
			continue
		}
		ns.mu.Lock()
		ns.sub, ns.chans = sub, make(map[string]*chanState)
		// Waits from an earlier connection wait for this one's SUBSCRIBE.
		for i := range ns.waits {
			ns.waits[i].n = 0
		}
		ns.mu.Unlock()
		ns.wake()
		if ctx.Err() != nil { // closed while connecting
			sub.Close()
			return
		}
		heard := ns.receive(ctx, sub)
		ns.mu.Lock()
		ns.sub = nil
		ns.mu.Unlock()
		sub.Close()
		if !heard {
			ns.unreachable()
			delay = backOff(ctx, delay)
			continue
		}
		delay = 50 * time.Millisecond
		// Releases may have gone unannounced while the connection was down.
		ns.s.wakeAll()
	}
}

// receive passes on what arrives on sub until it fails, and reports
// whether anything did. The first event makes the node reachable again.
func (ns *nodeSub) receive(ctx context.Context, sub Subscriber) (heard bool) {
	for {
		ev, err := sub.Receive(ctx)
		if err != nil {
			return heard
		}
		if !heard {
			heard = true
			ns.mu.Lock()
			ns.dialFailed = false
			ns.mu.Unlock()
		}
		switch ev.Kind {
		case Subscribed:
			ns.ack(ev.Channel)
		case Message:
			ns.s.announce(ns.i, ev.Channel, ev.Payload)
		}
	}
}

// unreachable records that the node could not be reached: the Watches
// waiting for it stop waiting, and none waits for it until it can be (see
// want). Their waits stay, so that the node's confirmation, once it is
// reached, wakes their watchers; the waits of closed watches go.
func (ns *nodeSub) unreachable() {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	ns.dialFailed = true
	for _, w := range ns.waits {
		if !w.c.given {
			w.c.given = true
			close(w.c.gaveUp)
		}
	}
	ns.endWaits(func(w ackWait) bool { return !ns.s.watched(w.ch) })
}

// backOff waits for delay, or for ctx to end, and returns the next delay.
func backOff(ctx context.Context, delay time.Duration) time.Duration {
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	return min(2*delay, 2*time.Second)
}
