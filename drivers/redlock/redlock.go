package redlock

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distlock/lock/driver"
)

const (
	// DefaultNodeTimeout is the least per-node timeout the adaptive
	// timeout takes (see WithNodeTimeout). The Redis document suggests
	// 5-50ms for a 10s TTL; we take the top of that range, which a healthy
	// node on a LAN answers well within, so that a hung node costs an
	// operation at most this long there.
	DefaultNodeTimeout = 50 * time.Millisecond

	// DefaultKeyPrefix is put before every key stored in Redis.
	DefaultKeyPrefix = "distlock:"

	// MaxNodes is the largest number of nodes supported.
	MaxNodes = 64

	// cleanupTimeout bounds the release that undoes a failed acquisition
	// on one node.
	cleanupTimeout = time.Second
)

type config struct {
	nodeTimeout  time.Duration // fixed; 0: adaptive (see roundTimeout)
	fixedTimeout bool          // WithNodeTimeout was given
	fencing      bool
	prefix       string
}

// An Option configures a [Redlock].
type Option func(*config)

// WithNodeTimeout sets a fixed timeout for each request to one node. It
// must be positive; keep it small against the TTLs in use, since an
// acquisition may take that long. By default the timeout adapts to the
// nodes' round trips, as TCP's does (3 smoothed round trips and 4 of their
// variations, of the slowest node), between [DefaultNodeTimeout] and
// [MaxNodeTimeout] (and at most a quarter of the TTL for acquisitions and
// extensions); before a node's first answer it is the most, and after a
// timeout it doubles, until the node answers again. So the same
// defaults work on a LAN and on links of a few hundred milliseconds, and a
// round never waits for a slow or dead minority: it decides at the
// quorum's verdict.
func WithNodeTimeout(d time.Duration) Option {
	return func(c *config) { c.nodeTimeout, c.fixedTimeout = d, true }
}

// WithFencing turns fencing tokens on or off (default off). See the
// package documentation for what they cost and guarantee, and "Fencing
// tokens" in DESIGN.md for how they work.
func WithFencing(on bool) Option { return func(c *config) { c.fencing = on } }

// WithKeyPrefix sets the prefix of every key stored in Redis (default
// [DefaultKeyPrefix]). Clients that should contend must use the same
// prefix.
func WithKeyPrefix(p string) Option { return func(c *config) { c.prefix = p } }

// Redlock is the algorithm over a set of nodes. It implements driver.Conn
// with driver.Extender, driver.Waiter, driver.Pinger and driver.Inspector,
// and is safe for concurrent use.
type Redlock struct {
	nodes    []Node
	cfg      config
	rtt      []rttEstimate // by node, for the adaptive node timeout
	breakers []breaker     // by node
	seeds    []uint64      // by node: the hash of its name, for lead
	epoch    time.Time     // the breakers' clock starts here
	subs     *subscriptions
	workers  *workers
	skipped  []skipped          // by node: releases its open breaker held back
	bgctx    context.Context    // ends at Close: for the sending of skipped releases
	bgcancel context.CancelFunc //
	bg       sync.WaitGroup     // goroutines sending skipped releases

	mu       sync.Mutex
	inflight map[string]*round // acquisitions granted while some of their requests were still out, by value
	undoing  map[string]*round // failed acquisitions not yet undone on every node, by lock key
	nundoing atomic.Int32      // len(undoing), read without mu
}

var (
	_ driver.Conn     = (*Redlock)(nil)
	_ driver.Extender = (*Redlock)(nil)
	_ driver.Waiter   = (*Redlock)(nil)
	_ driver.Pinger   = (*Redlock)(nil)
)

// New returns the algorithm over nodes, which must be independent masters:
// the same node (by its String) twice is refused. Closing it closes the
// nodes. To plug nodes into package lock, use [NewConnector] or
// [NewConnectorFunc] instead.
func New(nodes []Node, opts ...Option) (*Redlock, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if err := checkNodes(nodes); err != nil {
		return nil, err
	}
	return newRedlock(nodes, cfg), nil
}

// newConfig applies opts to the defaults and checks the result.
func newConfig(opts []Option) (config, error) {
	cfg := config{prefix: DefaultKeyPrefix}
	for _, o := range opts {
		if o == nil {
			return cfg, errors.New("redlock: nil Option")
		}
		o(&cfg)
	}
	if cfg.nodeTimeout < 0 || cfg.nodeTimeout == 0 && cfg.fixedTimeout {
		return cfg, fmt.Errorf("redlock: node timeout %v is not positive", cfg.nodeTimeout)
	}
	return cfg, nil
}

// checkNodes checks that nodes is a usable set of independent masters.
func checkNodes(nodes []Node) error {
	switch {
	case len(nodes) == 0:
		return errors.New("redlock: no nodes")
	case len(nodes) > MaxNodes:
		return fmt.Errorf("redlock: %d nodes, over the maximum of %d", len(nodes), MaxNodes)
	}
	seen := make(map[string]bool, len(nodes))
	for i, n := range nodes {
		if n == nil {
			return fmt.Errorf("redlock: node %d is nil", i)
		}
		name := n.String()
		if seen[name] {
			return fmt.Errorf("redlock: node %s is listed twice: the nodes must be independent masters", name)
		}
		seen[name] = true
	}
	return nil
}

func newRedlock(nodes []Node, cfg config) *Redlock {
	r := &Redlock{nodes: nodes, cfg: cfg, rtt: make([]rttEstimate, len(nodes)), breakers: make([]breaker, len(nodes)), epoch: time.Now(), inflight: make(map[string]*round), undoing: make(map[string]*round)}
	for i := range r.breakers {
		r.breakers[i].answered.Store(math.MinInt64 / 2) // silent until it answers
	}
	r.seeds = make([]uint64, len(nodes))
	for i, n := range nodes {
		r.seeds[i] = fnv64(n.String())
	}
	r.subs = newSubscriptions(r)
	r.workers = newWorkers(len(nodes))
	r.skipped = make([]skipped, len(nodes))
	r.bgctx, r.bgcancel = context.WithCancel(context.Background())
	return r
}

// Nodes returns the number of nodes.
func (r *Redlock) Nodes() int { return len(r.nodes) }

// String describes r: its nodes, by their String, and its parameters,
// never a password.
func (r *Redlock) String() string { return describe(nodeNames(r.nodes), r.cfg) }

// GoString is String, so that %#v shows no password either.
func (r *Redlock) GoString() string { return r.String() }

func (r *Redlock) lockKey(key string) string { return r.cfg.prefix + "{" + key + "}" }
func (r *Redlock) fenceKey(lk string) string { return lk + ":fence" }
func (r *Redlock) channel(key string) string { return r.cfg.prefix + "{" + key + "}:released" }

// lead returns the node that announces the releases of lk (see Release):
// the one whose name hashed with lk is the highest (rendezvous hashing), so
// that clients that list the same nodes in another order agree on it, and
// keys spread over the nodes. Clients that name a node differently may
// pick different leads, which costs nothing: waiters listen on every node,
// and a woken attempt asks the node that announced first, whichever it is.
func (r *Redlock) lead(lk string) int {
	h := fnv64(lk)
	best, top := 0, mix64(h^r.seeds[0])
	for i := 1; i < len(r.seeds); i++ {
		if v := mix64(h ^ r.seeds[i]); v > top {
			best, top = i, v
		}
	}
	return best
}

// healthyLead returns the healthy node whose name hashed with lk is the
// highest: lk's lead, if it is healthy. It returns false if no node is.
func (r *Redlock) healthyLead(lk string) (int, bool) {
	h := fnv64(lk)
	best, top, found := 0, uint64(0), false
	for i := range r.seeds {
		if v := mix64(h ^ r.seeds[i]); r.healthy(i) && (!found || v > top) {
			best, top, found = i, v, true
		}
	}
	return best, found
}

// degraded reports whether a node timed out since its last answer.
func (r *Redlock) degraded() bool {
	for i := range r.breakers {
		if !r.healthy(i) {
			return true
		}
	}
	return false
}

// fnv64 is the 64-bit FNV-1a hash of s (hash/fnv's, without its
// allocation on the woken attempt's path).
func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h
}

// mix64 is splitmix64's finalizer: every bit of x moves every bit of the
// result.
func mix64(x uint64) uint64 {
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

func millis(d time.Duration) int64 { return int64((d + time.Millisecond - 1) / time.Millisecond) }

// Acquire makes one attempt to take key on a quorum of nodes.
func (r *Redlock) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	lk := r.lockKey(key)
	ms := millis(ttl) // rounded up: a lease a little longer than asked is safe
	var rd *round
	if r.cfg.fencing {
		rd = r.newRound(ctx, askFencedAcquire, fencedAcquireScript.call([]string{lk, r.fenceKey(lk)}, value, ms))
		rd.script = fencedAcquireScript
	} else {
		rd = r.newRound(ctx, askSet, []any{"SET", lk, value, "PX", ms, "NX"})
	}
	rd.undo, rd.lk, rd.value, rd.ttl = true, lk, value, ttl
	rd.prior = r.beingUndone(lk)
	ch, heard, from, fresh, watched := r.subs.announcements(key)
	switch {
	case len(r.nodes) == 1:
	case fresh && r.healthy(from) && !r.degraded():
		// Woken by a release: the client's rivals likely were too. Asked
		// at once, the nodes would split their votes among them, often so
		// that none wins; asked through the node that announced the
		// release first (it has released the key, and the rivals heard
		// the same node), the one it grants goes on to the others and the
		// rest stop there.
		rd.leadFirst, rd.lead = true, from
	case fresh || watched || r.degraded():
		// A retry of a call that found the key held, or any attempt while
		// a node is failing: through the key's first healthy node by
		// rendezvous hashing (its lead, which announces its releases, if
		// healthy), rivals meet where the woken ones do. With a node down,
		// a quorum needs nearly every node left, and a rival that takes
		// one of them spoils the round: asked at once, rivals split the
		// votes so that none wins (with 2 of 5 nodes hung and 8
		// contenders, handoffs fell from about 200/s to 2/s). The
		// announcer is no guide then: with the lead hung, every node that
		// releases announces, and rivals hear different ones first.
		if lead, ok := r.healthyLead(lk); ok {
			rd.leadFirst, rd.lead = true, lead
		}
	}
	rd.start()
	var lease driver.Lease
	var err error
	switch rd.tally() {
	case granted:
		if r.cfg.fencing {
			lease, err = r.fence(ctx, rd, lk, value)
		}
	case refused:
		err = driver.ErrHeld
		if watched {
			r.subs.rewake(ch, heard)
		}
	default:
		err = rd.err("acquire")
	}
	if err == nil {
		r.track(rd)
	} else {
		r.trackUndo(rd)
	}
	rd.finish(err != nil)
	return lease, err
}

// askSet asks for a plain SET NX, after the undoing of this client's
// last failed attempt on the node, if any.
func askSet(rd *round, ctx context.Context, i int, n Node) (bool, int64, error) {
	if rd.prior != nil {
		rd.prior.waitUndone(ctx, i)
	}
	reply, err := n.Do(ctx, rd.args)
	switch {
	case err != nil:
		return false, 0, err
	case reply == nil:
		return false, 0, nil // NX: the key exists
	case reply != "OK":
		return false, 0, fmt.Errorf("SET replied %v: %w", reply, errNoReply)
	}
	return true, 0, nil
}

// askFencedAcquire asks for a SET NX that also reads the fencing counter,
// after the undoing of this client's last failed attempt on the node, if
// any.
func askFencedAcquire(rd *round, ctx context.Context, i int, n Node) (bool, int64, error) {
	if rd.prior != nil {
		rd.prior.waitUndone(ctx, i)
	}
	v, err := run(ctx, n, rd.script, rd.args)
	return err == nil && v >= 0, v, err
}

// askOne runs the round's script, and counts a reply of 1 as a yes and 0
// as a no.
func askOne(rd *round, ctx context.Context, _ int, n Node) (bool, int64, error) {
	v, err := run(ctx, n, rd.script, rd.args)
	return err == nil && v == 1, v, err
}

// askRelease runs the release script, after the node's straggling
// acquisition, if any, and with the round's quiet arguments (no
// announcement) on every node but the one that announces.
func askRelease(rd *round, ctx context.Context, i int, n Node) (bool, int64, error) {
	if rd.prior != nil {
		rd.prior.waitEnded(ctx, i) // never overtake this node's own SET
	}
	v, err := run(ctx, n, rd.script, rd.releaseCall(i))
	return err == nil && v == 1, v, err
}

// releaseCall returns the release script's call for node i: the round's
// quiet arguments (no announcement) on every node but the one that
// announces.
func (rd *round) releaseCall(i int) []any {
	if rd.quiet != nil && i != rd.lead {
		return rd.quiet
	}
	return rd.args
}

// askFence is askOne on the nodes where the acquisition took the lock.
func askFence(rd *round, ctx context.Context, i int, n Node) (bool, int64, error) {
	if rd.prior.yesSet&(1<<i) == 0 {
		return false, 0, nil // the lock is not ours there: count it as a no
	}
	return askOne(rd, ctx, i, n)
}

// askPing asks for a PING.
func askPing(rd *round, ctx context.Context, _ int, n Node) (bool, int64, error) {
	_, err := n.Do(ctx, rd.args)
	return err == nil, 0, err
}

// track remembers a granted acquisition whose requests to some nodes are
// still out, so that its release waits for them node by node; the last
// request to end forgets it (see round.async).
func (r *Redlock) track(rd *round) {
	if rd.sync {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if rd.running.Load() > 0 {
		r.inflight[rd.value] = rd
	}
}

func (r *Redlock) untrack(rd *round) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inflight[rd.value] == rd {
		delete(r.inflight, rd.value)
	}
	if r.undoing[rd.lk] == rd {
		delete(r.undoing, rd.lk)
		r.nundoing.Add(-1)
	}
}

// trackUndo remembers a failed acquisition until it is undone on every
// node, so that the next attempt on its key sends its request to a node
// only once the failed one is undone there: sent at once, the request
// could reach the node first, and find the key held by our own failed
// attempt. (A retry woken by a release comes right after a failure.)
// The round's undone channels are made here, before the round can be
// found, and before finish lets its node goroutines close them.
func (r *Redlock) trackUndo(rd *round) {
	if rd.sync || rd.short {
		return // one node, or refused by the lead alone: nothing to spoil or undo
	}
	rd.undone = make([]chan struct{}, rd.n)
	for i := range rd.undone {
		rd.undone[i] = make(chan struct{})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.undoing[rd.lk]; !ok {
		r.nundoing.Add(1)
	}
	r.undoing[rd.lk] = rd
}

// beingUndone returns the last failed acquisition of lk if it is not yet
// undone on every node.
func (r *Redlock) beingUndone(lk string) *round {
	if r.nundoing.Load() == 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.undoing[lk]
}

// straggling returns the acquisition of value if some of its requests are
// still out.
func (r *Redlock) straggling(value string) *round {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inflight[value]
}

// fence raises the key's counter to max+1 on the nodes that granted the
// lock, and returns the token if a quorum took it.
func (r *Redlock) fence(ctx context.Context, acq *round, lk, value string) (driver.Lease, error) {
	t := acq.max + 1
	rd := r.newRound(ctx, askFence, fenceScript.call([]string{lk, r.fenceKey(lk)}, value, t))
	rd.script, rd.prior = fenceScript, acq
	rd.start()
	defer rd.finish(false)
	switch rd.tally() {
	case granted:
		return driver.Lease{Token: uint64(t), Fenced: true}, nil
	case refused:
		return driver.Lease{}, fmt.Errorf("redlock: the lock was lost on a quorum of nodes before its fencing token was written")
	}
	return driver.Lease{}, rd.err("fence")
}

// undo releases lk on n after a failed acquisition, without announcing
// it: see "Wake-ups" in DESIGN.md.
func (r *Redlock) undo(ctx context.Context, n Node, lk, value string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), max(cleanupTimeout, r.roundTimeout(0)))
	defer cancel()
	// Best effort: if it fails, the key expires by its TTL.
	run(ctx, n, undoScript, undoScript.call([]string{lk}, value)) //nolint:errcheck
}

// Release deletes key on every node where value holds it, and announces
// the release on one node, the key's lead, for its waiters: each node's
// announcement would wake every waiter of every client (the messages and
// the attempts they start crowd out the handoff on a small machine), and
// the waiters' attempts ask the announcing node first, which has released
// the key. If the lead timed out lately, every node that releases the key
// announces it; if the lead did not release it (it failed, or never held
// the key), the nodes that did announce it once every request has ended.
func (r *Redlock) Release(ctx context.Context, key, value string) error {
	lk, ch := r.lockKey(key), r.channel(key)
	if failed := r.beingUndone(lk); failed != nil && failed.value == value {
		// A failed acquisition's own undo is under way on every node that
		// may hold it (each after its SET ended): the core's cleanup need
		// not wait for a second one, which on nodes that stopped answering
		// would cost a node timeout more.
		return driver.ErrNotHeld
	}
	rd := r.newRound(ctx, askRelease, releaseScript.call([]string{lk}, value, ch))
	rd.script, rd.prior = releaseScript, r.straggling(value)
	if len(r.nodes) > 1 {
		if lead := r.lead(lk); r.breakers[lead].timeouts.Load() == 0 {
			rd.lead, rd.quiet = lead, releaseScript.call([]string{lk}, value, "")
			rd.channel, rd.value = ch, value
		}
	}
	// A Release returns at a quorum's verdict, and its caller may cancel
	// its context at once: the requests still out must not end with it,
	// or the key stays held on their nodes, and unannounced, until its TTL.
	rd.detached = true
	rd.start()
	defer rd.finish(false)
	switch rd.tally() {
	case granted:
		return nil
	case refused:
		return driver.ErrNotHeld
	}
	return rd.err("release")
}

// Extend resets the expiry of key to ttl on every node where value holds
// it, and succeeds if a quorum did.
func (r *Redlock) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	rd := r.newRound(ctx, askOne, extendScript.call([]string{r.lockKey(key)}, value, millis(ttl)))
	rd.script, rd.ttl = extendScript, ttl
	rd.start()
	defer rd.finish(false)
	switch rd.tally() {
	case granted:
		return nil
	case refused:
		return driver.ErrNotHeld
	}
	return rd.err("extend")
}

var pingCmd = []any{"PING"}

// Ping succeeds if a quorum of nodes answers.
func (r *Redlock) Ping(ctx context.Context) error {
	rd := r.newRound(ctx, askPing, pingCmd).start()
	defer rd.finish(false)
	if rd.tally() == granted {
		return nil
	}
	return rd.err("ping")
}

// Close stops the subscriptions and closes the nodes.
func (r *Redlock) Close() error {
	r.subs.close()
	r.workers.close()
	r.bgcancel()
	r.bg.Wait()
	var errs []error
	for _, n := range r.nodes {
		if err := n.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
