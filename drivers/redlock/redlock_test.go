package redlock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock/driver"
)

// These tests check the algorithm's decisions and orderings with scripted
// nodes, where real servers cannot be made to answer in a chosen order.
// The drivers' own tests run the whole algorithm on real redis-server
// processes, faults included.

// fakeNode is a Node that keeps keys in memory, runs the package's
// scripts natively, and can be told to delay or hang.
type fakeNode struct {
	name string

	mu                   sync.Mutex
	keys                 map[string]string
	expires              map[string]time.Time // of keys set with an expiry
	subs                 []*fakeSub
	log                  []string      // commands in the order they took effect
	delay                time.Duration // before each command takes effect
	hang                 bool          // never answer (until ctx ends)
	socketTimeouts       bool          // a hung command ends at ctx's deadline with a socket's "i/o timeout", as Redis clients' do
	slow                 time.Duration // before each command is sent, like a busy client: a ctx that ends first drops it
	asked                int           // commands received
	waiting, peakWaiting int           // commands hung, now and at most

	undoDelay    time.Duration    // before an undo takes effect
	published    int              // announcements made
	confirmDelay time.Duration    // before a subscription takes effect and is confirmed
	dialDelay    time.Duration    // before Subscribe returns a connection, as a client that dials one
	dialErr      error            // what Subscribe returns, if set: the node refuses connections
	connDies     bool             // Subscribe's connections end at once, as go-redis's to a node that refuses connections
	dials        int              // Subscribe calls
	setsPX       map[int64]int    // SETs received, by their PX
	lateSets     bool             // SETs go unanswered (until ctx ends) and take effect only at landLate
	late         [][]any          // the SETs held back by lateSets
	nextSET      [2]time.Duration // the next SET waits [0] before it takes effect, and [1] more before it answers
}

// setNextSET makes the node's next SET wait before, before it takes
// effect, and after, before it answers: a request that a busy client
// sends late, and whose answer it reads late.
func (f *fakeNode) setNextSET(before, after time.Duration) {
	f.mu.Lock()
	f.nextSET = [2]time.Duration{before, after}
	f.mu.Unlock()
}

// setLateSets makes the node leave SETs unanswered, as a server that has
// not read them yet when the client gives up; landLate runs them.
func (f *fakeNode) setLateSets(on bool) { f.mu.Lock(); f.lateSets = on; f.mu.Unlock() }

// landLate runs the SETs that lateSets held back, as the server that
// reads them at last.
func (f *fakeNode) landLate() {
	f.mu.Lock()
	late := f.late
	f.late = nil
	f.mu.Unlock()
	for _, args := range late {
		f.apply(args) //nolint:errcheck
	}
}

func newFake(name string) *fakeNode {
	return &fakeNode{name: name, keys: make(map[string]string), expires: make(map[string]time.Time), setsPX: make(map[int64]int)}
}

// hold sets k to v for ttl, as another client's SET PX would.
func (f *fakeNode) hold(k, v string, ttl time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys[k], f.expires[k] = v, time.Now().Add(ttl)
}

func (f *fakeNode) setDelay(d time.Duration) { f.mu.Lock(); f.delay = d; f.mu.Unlock() }
func (f *fakeNode) setHang(h bool)           { f.mu.Lock(); f.hang = h; f.mu.Unlock() }

func (f *fakeNode) commands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

// hangUntil waits for ctx to end, or, with socket, for its deadline, as a
// connection's read deadline would (which may fire before ctx's own timer),
// and returns the error a client would.
func (f *fakeNode) hangUntil(ctx context.Context, socket bool) error {
	deadline, ok := ctx.Deadline()
	if !socket || !ok {
		<-ctx.Done()
		return ctx.Err()
	}
	select {
	case <-time.After(time.Until(deadline)):
		return &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fakeNode) Do(ctx context.Context, args []any) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // as a real client: nothing is sent under a context that ended
	}
	f.mu.Lock()
	delay, hang, slow := f.delay, f.hang, f.slow
	f.asked++
	if f.lateSets && args[0] == "SET" {
		f.late = append(f.late, args)
		hang = true
	}
	var lag [2]time.Duration
	if args[0] == "SET" {
		lag, f.nextSET = f.nextSET, [2]time.Duration{}
	}
	f.mu.Unlock()
	if lag != [2]time.Duration{} {
		time.Sleep(lag[0])
		reply, err := f.apply(args)
		time.Sleep(lag[1])
		return reply, err
	}
	if slow > 0 {
		select {
		case <-time.After(slow):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if hang {
		f.mu.Lock()
		f.waiting++
		f.peakWaiting = max(f.peakWaiting, f.waiting)
		socket := f.socketTimeouts
		f.mu.Unlock()
		err := f.hangUntil(ctx, socket)
		f.mu.Lock()
		f.waiting--
		f.mu.Unlock()
		return nil, err
	}
	if delay > 0 {
		time.Sleep(delay) // like a server that is slow but answers: ignores ctx
	}
	f.mu.Lock()
	undoDelay := f.undoDelay
	f.mu.Unlock()
	if len(args) > 1 && args[1] == undoScript.SHA && undoDelay > 0 {
		time.Sleep(undoDelay)
	}
	return f.apply(args)
}

// apply carries out a command.
func (f *fakeNode) apply(args []any) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name := args[0].(string)
	switch name {
	case "PING":
		return "PONG", nil
	case "PUBLISH":
		f.publish(args[1].(string), args[2].(string))
		return int64(len(f.subs)), nil
	case "SET":
		k, v := args[1].(string), args[2].(string)
		f.log = append(f.log, "SET "+v)
		f.setsPX[args[4].(int64)]++
		if _, ok := f.keys[k]; ok {
			return nil, nil
		}
		f.keys[k] = v
		f.expires[k] = time.Now().Add(time.Duration(args[4].(int64)) * time.Millisecond)
		return "OK", nil
	case "EVALSHA":
		sha := args[1].(string)
		if reply, ok := f.runTwoKeyScript(sha, args); ok {
			return reply, nil
		}
		k, v := args[3].(string), args[4].(string)
		switch sha {
		case releaseScript.SHA, undoScript.SHA:
			f.log = append(f.log, "RELEASE "+v)
			if f.keys[k] == v {
				delete(f.keys, k)
				if sha == releaseScript.SHA && args[5].(string) != "" {
					f.publish(args[5].(string), v)
				}
				return int64(1), nil
			}
			return int64(0), nil
		case retakeScript.SHA:
			f.log = append(f.log, "SET "+v)
			if held, ok := f.keys[k]; ok && !slices.Contains(args[6:], any(held)) {
				return int64(0), nil
			}
			f.keys[k] = v
			f.expires[k] = time.Now().Add(time.Duration(args[5].(int64)) * time.Millisecond)
			return int64(1), nil
		case extendScript.SHA:
			f.log = append(f.log, "EXTEND "+v)
			held, ok := f.keys[k]
			switch {
			case held == v:
				f.expires[k] = time.Now().Add(time.Duration(args[5].(int64)) * time.Millisecond)
				return int64(1), nil
			case !ok:
				return int64(-1), nil
			}
			return int64(0), nil
		}
	}
	return nil, fmt.Errorf("ERR unknown command %v", args)
}

// runTwoKeyScript runs the scripts that take a lock key and its fencing
// counter (fencing and inspection) natively, with f.mu held; ok is false
// for other scripts.
func (f *fakeNode) runTwoKeyScript(sha string, args []any) (reply any, ok bool) {
	switch sha {
	case fencedAcquireScript.SHA:
		lk, fk, v := args[3].(string), args[4].(string), args[5].(string)
		f.log = append(f.log, "SET "+v)
		if _, held := f.keys[lk]; held {
			return int64(-1), true
		}
		f.keys[lk] = v
		f.expires[lk] = time.Now().Add(time.Duration(args[6].(int64)) * time.Millisecond)
		n, _ := strconv.ParseInt(f.keys[fk], 10, 64)
		return n, true
	case fenceScript.SHA:
		lk, fk, v, t := args[3].(string), args[4].(string), args[5].(string), args[6].(int64)
		f.log = append(f.log, "FENCE "+v)
		if n, _ := strconv.ParseInt(f.keys[fk], 10, 64); n < t {
			f.keys[fk] = strconv.FormatInt(t, 10)
		}
		if f.keys[lk] != v {
			return int64(0), true
		}
		return int64(1), true
	case inspectScript.SHA:
		lk, fk := args[3].(string), args[4].(string)
		f.log = append(f.log, "INSPECT")
		v, held := f.keys[lk]
		if !held {
			return nil, true
		}
		pttl := int64(-1) // no expiry, as Redis says
		if e, ok := f.expires[lk]; ok {
			pttl = time.Until(e).Milliseconds()
		}
		return []any{v, pttl, f.keys[fk]}, true
	}
	return nil, false
}

// Subscribe opens a publish/subscribe connection to the node, which hears
// what the release script (and publish) announce.
func (f *fakeNode) Subscribe(ctx context.Context) (Subscriber, error) {
	f.mu.Lock()
	dial, dialErr, dies := f.dialDelay, f.dialErr, f.connDies
	f.dials++
	f.mu.Unlock()
	if dialErr != nil {
		return nil, dialErr
	}
	if dial > 0 {
		select {
		case <-time.After(dial):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	sub := &fakeSub{node: f, chans: make(map[string]bool), events: make(chan Event, 64), closed: make(chan struct{})}
	if dies {
		sub.Close()
	}
	f.mu.Lock()
	f.subs = append(f.subs, sub)
	f.mu.Unlock()
	return sub, nil
}

// publish sends payload on channel to the node's subscribers. f.mu must
// be held.
func (f *fakeNode) publish(channel, payload string) {
	f.published++
	for _, sub := range f.subs {
		sub.deliver(channel, Event{Kind: Message, Channel: channel, Payload: payload})
	}
}

// releaseAnnounced deletes k if it holds v and announces it on channel, as
// the release script would.
func (f *fakeNode) releaseAnnounced(k, v, channel string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.keys[k] == v {
		delete(f.keys, k)
		f.publish(channel, v)
	}
}

// subscribed reports whether a subscriber of the node listens on channel.
func (f *fakeNode) subscribed(channel string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, sub := range f.subs {
		sub.mu.Lock()
		on := sub.chans[channel]
		sub.mu.Unlock()
		if on {
			return true
		}
	}
	return false
}

// fakeSub is a fakeNode's publish/subscribe connection.
type fakeSub struct {
	node      *fakeNode
	mu        sync.Mutex
	chans     map[string]bool
	events    chan Event
	closed    chan struct{}
	closeOnce sync.Once
}

func (s *fakeSub) deliver(channel string, ev Event) {
	s.mu.Lock()
	on := s.chans[channel]
	s.mu.Unlock()
	if on {
		select {
		case s.events <- ev:
		case <-s.closed:
		}
	}
}

func (s *fakeSub) Subscribe(ctx context.Context, ch string) error {
	s.node.mu.Lock()
	delay, hang := s.node.confirmDelay, s.node.hang
	s.node.mu.Unlock()
	if hang {
		<-ctx.Done()
		return ctx.Err()
	}
	confirm := func() {
		s.mu.Lock()
		s.chans[ch] = true
		s.mu.Unlock()
		select {
		case s.events <- Event{Kind: Subscribed, Channel: ch}:
		case <-s.closed:
		}
	}
	if delay > 0 {
		time.AfterFunc(delay, confirm)
		return nil
	}
	confirm()
	return nil
}

func (s *fakeSub) Unsubscribe(ctx context.Context, ch string) error {
	s.node.mu.Lock()
	hang := s.node.hang
	s.node.mu.Unlock()
	if hang {
		<-ctx.Done()
		return ctx.Err()
	}
	s.mu.Lock()
	delete(s.chans, ch)
	s.mu.Unlock()
	s.events <- Event{Kind: Other, Channel: ch}
	return nil
}

func (s *fakeSub) Receive(ctx context.Context) (Event, error) {
	select {
	case ev := <-s.events:
		return ev, nil
	case <-s.closed:
		return Event{}, errors.New("closed")
	case <-ctx.Done():
		return Event{}, ctx.Err()
	}
}

func (s *fakeSub) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	return nil
}
func (f *fakeNode) String() string { return f.name }
func (f *fakeNode) Close() error   { return nil }

func fakes(t *testing.T, n int, opts ...Option) (*Redlock, []*fakeNode) {
	t.Helper()
	fs := make([]*fakeNode, n)
	nodes := make([]Node, n)
	for i := range fs {
		fs[i] = newFake(fmt.Sprintf("node%d", i))
		nodes[i] = fs[i]
	}
	r, err := New(nodes, append([]Option{WithNodeTimeout(200 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, fs
}

// fakesOn returns another client of the nodes fs, as a second process
// would have.
func fakesOn(t *testing.T, fs []*fakeNode, opts ...Option) (*Redlock, []*fakeNode) {
	t.Helper()
	nodes := make([]Node, len(fs))
	for i, f := range fs {
		nodes[i] = f
	}
	r, err := New(nodes, append([]Option{WithNodeTimeout(200 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, fs
}

func TestAcquire_hungMinorityDoesNotDelay(t *testing.T) {
	r, fs := fakes(t, 5)
	fs[3].setHang(true)
	fs[4].setHang(true)
	start := time.Now()
	if _, err := r.Acquire(t.Context(), "k", "v1", time.Second); err != nil {
		t.Fatalf("Acquire with 2 of 5 hung: %v", err)
	}
	if took := time.Since(start); took > 100*time.Millisecond {
		t.Errorf("Acquire took %v: it waited for the hung nodes (timeout 200ms)", took)
	}
	start = time.Now()
	if err := r.Release(t.Context(), "k", "v1"); err != nil {
		t.Fatalf("Release with 2 of 5 hung: %v", err)
	}
	if took := time.Since(start); took > 100*time.Millisecond {
		t.Errorf("Release took %v: it waited for the hung nodes", took)
	}
}

func TestAcquire_hungMajorityFailsAsUnavailable(t *testing.T) {
	r, fs := fakes(t, 5)
	for _, f := range fs[:3] {
		f.setHang(true)
	}
	start := time.Now()
	_, err := r.Acquire(t.Context(), "k", "v1", time.Second)
	took := time.Since(start)
	var qe *QuorumError
	if !errors.As(err, &qe) || errors.Is(err, driver.ErrHeld) {
		t.Fatalf("Acquire with 3 of 5 hung = %v, want a *QuorumError that is not ErrHeld", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "unavailable") {
		t.Errorf("error %q should say the nodes were unavailable and wrap their timeouts", err)
	}
	if took < 200*time.Millisecond || took > 400*time.Millisecond {
		t.Errorf("Acquire took %v; want about the node timeout (200ms)", took)
	}
}

func TestAcquire_heldByQuorumDecidesAtOnce(t *testing.T) {
	r, fs := fakes(t, 5)
	for _, f := range fs[:3] {
		f.keys["distlock:{k}"] = "other"
	}
	fs[3].setHang(true)
	fs[4].setHang(true)
	start := time.Now()
	if _, err := r.Acquire(t.Context(), "k", "v1", time.Second); !errors.Is(err, driver.ErrHeld) {
		t.Fatalf("Acquire = %v, want ErrHeld", err)
	}
	if took := time.Since(start); took > 100*time.Millisecond {
		t.Errorf("refusal took %v: it waited for hung nodes after a quorum said held", took)
	}
}

func TestAcquire_failedCleanupNeverOvertakesSET(t *testing.T) {
	r, fs := fakes(t, 5)
	for _, f := range fs[:3] {
		f.keys["distlock:{k}"] = "other"
	}
	fs[4].setDelay(50 * time.Millisecond) // its SET succeeds, late
	if _, err := r.Acquire(t.Context(), "k", "v1", time.Second); !errors.Is(err, driver.ErrHeld) {
		t.Fatalf("Acquire = %v, want ErrHeld", err)
	}
	// The cleanup runs in the background once node 4's SET has answered.
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if got := fs[4].commands(); len(got) == 2 {
			if got[0] != "SET v1" || got[1] != "RELEASE v1" {
				t.Fatalf("node 4 saw %q; want its SET, then the cleanup", got)
			}
			if v, held := fs[4].keys["distlock:{k}"]; held {
				t.Fatalf("node 4 still holds the key for %q after the cleanup", v)
			}
			if got := fs[3].commands(); len(got) != 2 || got[1] != "RELEASE v1" {
				t.Errorf("node 3, which granted, saw %q; want SET then RELEASE", got)
			}
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("node 4 saw %q; want its SET, then the cleanup", fs[4].commands())
}

func TestRelease_neverOvertakesAStragglingSET(t *testing.T) {
	r, fs := fakes(t, 5)
	fs[4].setDelay(60 * time.Millisecond)
	if _, err := r.Acquire(t.Context(), "k", "v1", time.Second); err != nil {
		t.Fatal(err)
	}
	if err := r.Release(t.Context(), "k", "v1"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if got := fs[4].commands(); len(got) == 2 {
			if got[0] != "SET v1" || got[1] != "RELEASE v1" {
				t.Fatalf("node 4 saw %q; the release overtook its SET", got)
			}
			if _, held := fs[4].keys["distlock:{k}"]; held {
				t.Fatal("node 4 still holds the released key")
			}
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("node 4 saw %q; want SET, then RELEASE", fs[4].commands())
}

// A Release returns once a quorum released; the requests to slower nodes
// go on after the caller cancels its context, as callers do at once
// (defer cancel()): cut off, they would leave the key held there until
// its TTL, and their announcements unmade.
func TestRelease_stragglersOutliveTheCallersContext(t *testing.T) {
	r, fs := fakes(t, 5)
	if _, err := r.Acquire(t.Context(), "k", "v1", time.Minute); err != nil {
		t.Fatal(err)
	}
	fs[4].mu.Lock()
	fs[4].slow = 50 * time.Millisecond
	fs[4].mu.Unlock()
	ctx, cancel := context.WithCancel(t.Context())
	if err := r.Release(ctx, "k", "v1"); err != nil {
		t.Fatal(err)
	}
	cancel()
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		fs[4].mu.Lock()
		_, held := fs[4].keys["distlock:{k}"]
		fs[4].mu.Unlock()
		if !held {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the slow node still holds the key: its release was cut off with the caller's context")
}

func TestExtendRelease_verdicts(t *testing.T) {
	r, fs := fakes(t, 3)
	if _, err := r.Acquire(t.Context(), "k", "v1", time.Second); err != nil {
		t.Fatal(err)
	}
	if err := r.Extend(t.Context(), "k", "other", time.Second); !errors.Is(err, driver.ErrNotHeld) {
		t.Errorf("Extend by another value = %v, want ErrNotHeld", err)
	}
	if err := r.Release(t.Context(), "k", "other"); !errors.Is(err, driver.ErrNotHeld) {
		t.Errorf("Release by another value = %v, want ErrNotHeld", err)
	}
	fs[0].setHang(true)
	fs[1].setHang(true)
	var qe *QuorumError
	if err := r.Extend(t.Context(), "k", "v1", time.Second); !errors.As(err, &qe) {
		t.Errorf("Extend with 2 of 3 hung = %v, want a *QuorumError", err)
	}
	fs[0].setHang(false)
	if err := r.Extend(t.Context(), "k", "v1", time.Second); err != nil {
		t.Errorf("Extend with 1 of 3 hung: %v", err)
	}
}

func TestNew_refusesBadNodeLists(t *testing.T) {
	a, b := newFake("127.0.0.1:7001"), newFake("127.0.0.1:7001")
	cases := map[string]struct {
		nodes []Node
		opts  []Option
	}{
		"none":        {nil, nil},
		"twice":       {[]Node{a, b}, nil},
		"nil":         {[]Node{a, nil}, nil},
		"zeroTimeout": {[]Node{a}, []Option{WithNodeTimeout(0)}},
		"nilOption":   {[]Node{a}, []Option{nil}},
	}
	for name, c := range cases {
		if _, err := New(c.nodes, c.opts...); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
}

func TestParseDSN(t *testing.T) {
	urls, opts, err := ParseDSN("redis://:pw@a:1/0?node_timeout=20ms&fencing=true, rediss://b:2?key_prefix=x:&dial_timeout=1s")
	if err != nil {
		t.Fatal(err)
	}
	if len(urls) != 2 || urls[0] != "redis://:pw@a:1/0" || urls[1] != "rediss://b:2?dial_timeout=1s" {
		t.Errorf("urls = %q", urls)
	}
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.nodeTimeout != 20*time.Millisecond || !cfg.fencing || cfg.prefix != "x:" {
		t.Errorf("config = %+v", cfg)
	}
	for _, bad := range []string{
		"",
		"http://a:1",
		"redis://",
		"redis://:s3cret@a:1?node_timeout=-1s",
		"redis://:s3cret@a:1?fencing=maybe",
		"redis://:s3cret@a:1?fencing=true,redis://b:1?fencing=false",
		"redis://:s3cret@a:bad",
	} {
		_, _, err := ParseDSN(bad)
		if err == nil {
			t.Errorf("ParseDSN(%q) succeeded", bad)
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("ParseDSN(%q) = %q: the error repeats the password", bad, err)
		}
	}
}

// released reports whether w signals a release within d.
func released(w driver.Watch, d time.Duration) bool {
	select {
	case <-w.Released():
		return true
	case <-time.After(d):
		return false
	}
}

// watchHeld returns a key led by node 0 (woken attempts ask it first,
// where the tests' releases come first), which value holds on every node
// of fs, and a watch of it, subscribed on every node. The watch closes
// with the test.
func watchHeld(t *testing.T, r *Redlock, fs []*fakeNode, value string) (string, driver.Watch) {
	t.Helper()
	key := keyLedBy(t, r, 0)
	lk, ch := r.lockKey(key), r.channel(key)
	for _, f := range fs {
		f.hold(lk, value, time.Minute)
	}
	if _, err := r.Acquire(t.Context(), key, "w1", time.Minute); !errors.Is(err, driver.ErrHeld) {
		t.Fatalf("Acquire of a held key: %v", err)
	}
	w, err := r.Watch(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	// The Watch returned at a quorum of confirmations: wait for them all.
	deadline := time.Now().Add(5 * time.Second)
	for _, f := range fs {
		for !f.subscribed(ch) {
			if time.Now().After(deadline) {
				t.Fatal("not subscribed on every node")
			}
			time.Sleep(time.Millisecond)
		}
	}
	return key, w
}

// TestWatch_wakesAgainAfterRacingARelease: a waiter woken by the first
// node to announce a release may try before the other nodes have released
// the key, and be refused; the rest of the release's announcements, of the
// value that woke it already, must wake it again, or it would wait for its
// next poll; and its next attempt must not overtake the undoing of the
// refused one, or it would find the key held by itself.
func TestWatch_wakesAgainAfterRacingARelease(t *testing.T) {
	r, fs := fakes(t, 3)
	ctx := t.Context()
	const held = "holder"
	key, w := watchHeld(t, r, fs, held)
	lk, ch := r.lockKey(key), r.channel(key)

	fs[0].releaseAnnounced(lk, held, ch)
	if !released(w, 5*time.Second) {
		t.Fatal("the first announcement did not wake the watcher")
	}
	// The attempt it makes reaches nodes 1 and 2 before their release.
	// Its undo on node 0, where it took the key, is slow.
	fs[0].mu.Lock()
	fs[0].undoDelay = 50 * time.Millisecond
	fs[0].mu.Unlock()
	if _, err := r.Acquire(ctx, key, "w2", time.Minute); !errors.Is(err, driver.ErrHeld) {
		t.Fatalf("Acquire racing the release: %v", err)
	}
	fs[1].releaseAnnounced(lk, held, ch)
	if !released(w, 5*time.Second) {
		t.Fatal("after a refused attempt, the release's next announcement did not wake the watcher: it waits for its poll")
	}
	// Nodes 0 and 1 are free, once the failed attempt is undone on node 0:
	// the next attempt must not overtake that undo.
	if _, err := r.Acquire(ctx, key, "w3", time.Minute); err != nil {
		t.Fatalf("Acquire after the release reached a quorum: %v (node 0 ran %q)", err, fs[0].commands())
	}
	// Announcements of a release that woke the watcher, after no refused
	// attempt, still wake it once only.
	fs[2].releaseAnnounced(lk, held, ch)
	if released(w, 100*time.Millisecond) {
		t.Error("a release's third announcement woke the watcher a third time, with no refused attempt in between")
	}
}

// TestWatch_wakesAgainAfterRacingAReleaseAnnouncedOnce: a release that
// only the key's lead announces, as Release does when the lead is
// healthy. The attempt it wakes reaches the other nodes before the
// release does and is refused; with no announcement to come, the watcher
// is woken once more soon after, and takes the key. (Without it, a
// candidate that polled once a minute missed an election in make test.)
func TestWatch_wakesAgainAfterRacingAReleaseAnnouncedOnce(t *testing.T) {
	r, fs := fakes(t, 3)
	ctx := t.Context()
	const held = "holder"
	key, w := watchHeld(t, r, fs, held)
	lk, ch := r.lockKey(key), r.channel(key)
	fs[0].releaseAnnounced(lk, held, ch)
	if !released(w, 5*time.Second) {
		t.Fatal("the announcement did not wake the watcher")
	}
	if _, err := r.Acquire(ctx, key, "w2", time.Minute); !errors.Is(err, driver.ErrHeld) {
		t.Fatalf("Acquire racing the release: %v", err)
	}
	for _, f := range fs[1:] { // the release's quiet requests land now
		f.mu.Lock()
		delete(f.keys, lk)
		f.mu.Unlock()
	}
	if !released(w, 5*time.Second) {
		t.Fatal("after a woken attempt was refused, with no announcement to come, the watcher was not woken again: it waits for its poll")
	}
	if _, err := r.Acquire(ctx, key, "w3", time.Minute); err != nil {
		t.Fatalf("Acquire after the release reached every node: %v", err)
	}
}

// watchWoken returns a watch of key on r, closed with the test, which an
// announcement of a release on node 0 has woken once, and the key's
// channel.
func watchWoken(t *testing.T, r *Redlock, key string) (string, driver.Watch) {
	t.Helper()
	ch := r.channel(key)
	w, err := r.Watch(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	r.subs.announce(0, ch, "v")
	if !released(w, time.Second) {
		t.Fatal("the first announcement did not wake the watcher")
	}
	return ch, w
}

// TestWatch_wakesAtOnceAfterAnnouncementsDuringARefusedAttempt: the
// announcements that came in while an attempt was out, and were passed
// over as repeats, wake the watcher as soon as the attempt is refused.
func TestWatch_wakesAtOnceAfterAnnouncementsDuringARefusedAttempt(t *testing.T) {
	r, _ := fakes(t, 3)
	s := r.subs
	const key = "k"
	ch, w := watchWoken(t, r, key)
	ch2, n, _, _, watched := s.announcements(key)
	if !watched || ch2 != ch {
		t.Fatalf("announcements(%q) = %q, %v; want %q, true", key, ch2, watched, ch)
	}
	s.announce(0, ch, "v") // during the attempt: a repeat
	if released(w, 50*time.Millisecond) {
		t.Fatal("a repeated announcement woke the watcher")
	}
	s.rewake(ch, n, true, time.Minute) // the attempt was refused
	if !released(w, time.Second) {
		t.Fatal("a refused attempt during which announcements came in did not wake the watcher")
	}
	// Nothing came in during the next attempt: no wake-up (for a minute).
	_, n, _, fresh, _ := s.announcements(key)
	s.rewake(ch, n, fresh, time.Minute)
	if released(w, 50*time.Millisecond) {
		t.Error("a refused attempt during which nothing came in woke the watcher")
	}
}

// TestWatch_wakesOnceMoreAfterAWokenAttemptIsRefused: an attempt woken by
// an announcement, and refused with nothing heard during it, wakes the
// watcher once more, after the delay it gives. The attempt that follows
// is not fresh: its refusal wakes nobody.
func TestWatch_wakesOnceMoreAfterAWokenAttemptIsRefused(t *testing.T) {
	r, _ := fakes(t, 3)
	s := r.subs
	const key = "k"
	ch, w := watchWoken(t, r, key)
	_, n, _, fresh, _ := s.announcements(key)
	if !fresh {
		t.Fatal("the attempt after an announcement is not fresh")
	}
	s.rewake(ch, n, fresh, 300*time.Millisecond) // the woken attempt was refused
	if released(w, 100*time.Millisecond) {
		t.Fatal("woken again before the delay")
	}
	if !released(w, 5*time.Second) {
		t.Fatal("a refused woken attempt did not wake the watcher again")
	}
	_, n, _, fresh, _ = s.announcements(key)
	if fresh {
		t.Fatal("the attempt after the second wake-up is fresh: nothing was announced")
	}
	s.rewake(ch, n, fresh, time.Millisecond)
	if released(w, 300*time.Millisecond) {
		t.Error("the refusal of an attempt that no announcement woke woke the watcher")
	}
}

// valueOn returns what f holds at k.
func (f *fakeNode) valueOn(k string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.keys[k]
}

// TestRelease_doneOnceNoQuorumCanHoldTheValue: on 5 nodes, a lock held on
// 3 (the others held by someone else at its grant) is released on 2 while
// the third is slow past the node timeout. The value can no longer be on
// a quorum, so Release succeeds, and the slow node's release goes on: it
// holds the key no longer once it answers. A release that finds the value on no node
// still fails as not held.
func TestRelease_doneOnceNoQuorumCanHoldTheValue(t *testing.T) {
	r, fs, lk := grantedBeside(t)
	fs[2].setDelay(300 * time.Millisecond) // slow past the node timeout, but answers
	if err := r.Release(t.Context(), "k", "v1"); err != nil {
		t.Fatalf("Release with the value gone from 4 of 5 nodes and one slow: %v", err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		fs[2].mu.Lock()
		_, held := fs[2].keys[lk]
		fs[2].mu.Unlock()
		if !held {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow node still holds the released value")
		}
	}
	fs[2].setDelay(0)
	if err := r.Release(t.Context(), "k", "v1"); !errors.Is(err, driver.ErrNotHeld) {
		t.Errorf("a second Release = %v, want ErrNotHeld", err)
	}
}
