package nats

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// conn is one lock.Client's connection: the JetStream context, the
// bucket's names, the revisions it last saw of keys, and its watcher.
type conn struct {
	js     jetstream.JetStream
	nc     *nats.Conn
	cfg    Config
	own    bool   // the driver made nc, and closes it
	stream string // the bucket's stream, KV_<bucket>
	pre    string // the subject of a key is pre + its encoding
	api    string // the JetStream API's prefix, $JS.API. by default

	markerTTL time.Duration // how long release markers stay
	hints     hints
	undos     undos
	watcher   *watcher
	moved     moves

	ctx       context.Context // ends at Close, and with it every call
	stop      context.CancelFunc
	closeOnce sync.Once
}

var (
	_ driver.Conn            = (*conn)(nil)
	_ driver.Extender        = (*conn)(nil)
	_ driver.LeaseConn       = (*conn)(nil)
	_ driver.Transferer      = (*conn)(nil)
	_ driver.LeaseTransferer = (*conn)(nil)
	_ driver.Waiter          = (*conn)(nil)
	_ driver.Pinger          = (*conn)(nil)
	_ driver.Inspector       = (*conn)(nil)
	_ driver.Dropper         = (*conn)(nil)
)

func newConn(js jetstream.JetStream, cfg Config, own bool) *conn {
	c := &conn{
		js: js, nc: js.Conn(), cfg: cfg, own: own,
		stream: "KV_" + cfg.Bucket, pre: "$KV." + cfg.Bucket + ".",
		api: js.Options().APIPrefix, markerTTL: defaultMarkerTTL,
	}
	if c.api == "" {
		c.api = jetstream.DefaultAPIPrefix
	}
	c.ctx, c.stop = context.WithCancel(context.Background())
	c.watcher = newWatcher(c)
	if own {
		c.nc.SetReconnectHandler(func(*nats.Conn) { c.watcher.wakeAll() })
	}
	return c
}

// subject returns the subject of key: its bytes in unpadded base64url, a
// valid KV key whatever the key holds.
func (c *conn) subject(key string) string {
	return c.pre + base64.RawURLEncoding.EncodeToString([]byte(key))
}

// bound returns ctx bounded by the request timeout and by Close.
func (c *conn) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancelT := context.WithTimeoutCause(ctx, c.cfg.RequestTimeout, errTimedOut)
	ctx, cancelC := context.WithCancelCause(ctx)
	stop := context.AfterFunc(c.ctx, func() { cancelC(errClosed) })
	return ctx, func() {
		stop()
		cancelC(nil)
		cancelT()
	}
}

// Headers of the driver's messages besides JetStream's.
const (
	headerTTL   = "Nats-TTL"                            // the message's TTL, whole seconds
	headerToken = "Distlock-Token"                      // an extension's grant revision
	headerOp    = "KV-Operation"                        // DEL or PURGE, from the KV API
	headerRoll  = "Nats-Rollup"                         // sub: the purge removes what came before
	headerMark  = "Nats-Marker-Reason"                  // the server's marker of an expiry
	headerSeq   = "Nats-Expected-Last-Subject-Sequence" // the write's condition
)

// seconds returns d in whole seconds, rounded up: the server reads a TTL
// in whole seconds, and a lease must never end before its TTL.
func seconds(d time.Duration) string {
	return strconv.FormatInt(max(int64((d+time.Second-1)/time.Second), 1), 10)
}

// put is the message that sets subj to value for ttl if the subject's
// last revision is rev. An extension carries its grant's token.
func put(subj, value string, ttl time.Duration, rev, token uint64) *nats.Msg {
	m := nats.NewMsg(subj)
	m.Data = []byte(value)
	m.Header.Set(headerSeq, strconv.FormatUint(rev, 10))
	m.Header.Set(headerTTL, seconds(ttl))
	if token != 0 {
		m.Header.Set(headerToken, strconv.FormatUint(token, 10))
	}
	return m
}

// purge is the message that removes subj if its last revision is rev. The
// marker it leaves ends after ttl.
func purge(subj string, rev uint64, ttl time.Duration) *nats.Msg {
	m := nats.NewMsg(subj)
	m.Header.Set(headerOp, "PURGE")
	m.Header.Set(headerRoll, "sub")
	m.Header.Set(headerSeq, strconv.FormatUint(rev, 10))
	m.Header.Set(headerTTL, seconds(ttl))
	return m
}

// grant is the lease of a grant at revision rev, whose token is token.
func grant(token, rev uint64) driver.Lease {
	return driver.Lease{Token: token, Fenced: true, State: rev}
}

// tries bounds the writes of one call that lose to another writer
// between the read of a key and the write that follows it.
const tries = 3

// pauseInFlight is the pause before a write goes again on a revision that
// a read confirmed while another write of the key was in flight: the
// stream leader refuses a conditional write while one of the same key
// waits for its quorum.
const pauseInFlight = 5 * time.Millisecond

// Acquire writes value to key for ttl, on the condition that the key's
// last revision is the one this connection last saw of a release or an
// expiry (0 for a key never seen). If that condition fails, it reads the
// key at the stream leader. A key live with another value is held. A key
// live with this value was set by an earlier sending of this call.
// Otherwise it writes again on the revision read. The token is the
// grant's revision.
//
// An acquisition that lost tries times to other writers, and saw the key
// change during the call, is refused as held, though no holder may be
// left by the time it returns. Someone took the key after the call began,
// so a release or expiry marker of the key comes after the call began,
// and a waiter hears of it (see watcher). A write that fails while the
// key does not change (writes in flight that the leader cannot commit)
// goes again until the call's time ends, and fails as unavailable: never
// as held.
func (c *conn) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	ctx, done := c.bound(ctx)
	defer done()
	subj := c.subject(key)
	rev := c.hints.get(subj)
	var first uint64 // the key's revision that this call read first
	for n := 1; ; n++ {
		ack, _, err := c.send(ctx, put(subj, value, ttl, rev, 0))
		if err == nil {
			c.hints.drop(subj)
			return grant(ack.Sequence, ack.Sequence), nil
		}
		if !wrongSequence(err) {
			return driver.Lease{}, c.failed(ctx, key, value, ttl, err)
		}
		e, rerr := c.last(ctx, subj)
		if rerr != nil {
			return driver.Lease{}, c.failed(ctx, key, value, ttl, rerr)
		}
		c.hints.saw(subj, e)
		switch {
		case e.live && e.value == value:
			return grant(e.token, e.rev), nil
		case e.live:
			return driver.Lease{}, driver.ErrHeld
		case n == 1:
			first = e.rev
		case n >= tries && e.rev != first:
			return driver.Lease{}, driver.ErrHeld
		}
		if e.rev == rev {
			inFlight(ctx)
		}
		rev = e.rev
	}
}

// ExtendLease writes value to key again for ttl, on the condition that
// the key's last revision is the lease's. If that fails, the key is read
// at the stream leader. Live with this value at another revision, it was
// extended by an earlier call whose answer was lost, and the write goes
// again on that revision. Live with this value at the lease's revision,
// another write of the lease is in flight (see inFlight). Otherwise the
// lease is gone, and is never revived.
func (c *conn) ExtendLease(ctx context.Context, key, value string, lease driver.Lease, ttl time.Duration) (driver.Lease, error) {
	rev, ok := lease.State.(uint64)
	if !ok {
		return lease, errors.New("nats: extend: a lease of another driver")
	}
	ctx, done := c.bound(ctx)
	defer done()
	subj := c.subject(key)
	for n := 0; n < tries; {
		ack, _, err := c.send(ctx, put(subj, value, ttl, rev, lease.Token))
		if err == nil {
			lease.State = ack.Sequence
			return lease, nil
		}
		if !wrongSequence(err) {
			return lease, fail(ctx, "extend", err)
		}
		e, err := c.last(ctx, subj)
		if err != nil {
			return lease, fail(ctx, "extend", err)
		}
		c.hints.saw(subj, e)
		switch {
		case !e.live || e.value != value:
			return lease, driver.ErrNotHeld
		case e.rev == rev:
			inFlight(ctx)
		default:
			rev = e.rev
			n++
		}
	}
	return lease, driver.ErrNotHeld
}

// inFlight waits before a write of a lease goes again on the revision
// that a read confirmed after the stream leader refused it. The leader
// refuses a conditional write of a key while another waits for its
// quorum (10164). Of a live key, that is a write of its holder: an
// extension or a release whose caller gave up on its answer (KeepAlive's
// last extension, cut short by its stop, say), or an earlier sending of
// this call. It lands or fails within moments, or the call's time runs
// out. Reporting the lease not held instead would leave a release that
// lost to its own extension holding the key for another TTL.
func inFlight(ctx context.Context) { pause(ctx, pauseInFlight) }

// TransferLease writes next to key for ttl, on the condition that the
// key's last revision is the lease's. That is one write of the stream,
// where a release and an acquisition take two. The write is not a
// release, so no marker wakes other clients' waiters. The token is the
// transfer's revision. If the condition fails, the key is read at the
// stream leader, as ExtendLease does. Next holding it there means an
// earlier sending of this call landed and its answer was lost.
func (c *conn) TransferLease(ctx context.Context, key, value string, lease driver.Lease, next string, ttl time.Duration) (driver.Lease, error) {
	rev, ok := lease.State.(uint64)
	if !ok {
		return driver.Lease{}, errors.New("nats: transfer: a lease of another driver")
	}
	return c.transfer(ctx, key, value, next, ttl, rev)
}

// Transfer is TransferLease for the lease read from the stream leader.
func (c *conn) Transfer(ctx context.Context, key, value, next string, ttl time.Duration) (driver.Lease, error) {
	return c.transfer(ctx, key, value, next, ttl, 0)
}

// transfer writes next to key on the condition that its last revision is
// rev, or, with rev 0, the revision it reads first.
func (c *conn) transfer(ctx context.Context, key, value, next string, ttl time.Duration, rev uint64) (driver.Lease, error) {
	ctx, done := c.bound(ctx)
	defer done()
	subj := c.subject(key)
	var refused uint64 // the revision the leader last refused a write on
	for n := 0; n < tries; {
		if rev == 0 {
			e, err := c.last(ctx, subj)
			if err != nil {
				return driver.Lease{}, fail(ctx, "transfer", err)
			}
			c.hints.saw(subj, e)
			switch {
			case e.live && e.value == next:
				return grant(e.token, e.rev), nil
			case !e.live || e.value != value:
				return driver.Lease{}, driver.ErrNotHeld
			case e.rev == refused:
				inFlight(ctx) // another write of the key waits for its quorum
			case refused != 0:
				n++ // an extension whose answer was lost moved the key
			}
			rev = e.rev
		}
		ack, _, err := c.send(ctx, put(subj, next, ttl, rev, 0))
		switch {
		case err == nil:
			return grant(ack.Sequence, ack.Sequence), nil
		case !wrongSequence(err):
			return driver.Lease{}, fail(ctx, "transfer", err)
		}
		refused, rev = rev, 0
	}
	return driver.Lease{}, driver.ErrNotHeld
}

// Extend is ExtendLease for a lease read from the stream leader.
func (c *conn) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	e, err := c.read(ctx, key, "extend")
	if err != nil {
		return err
	}
	if !e.live || e.value != value {
		return driver.ErrNotHeld
	}
	_, err = c.ExtendLease(ctx, key, value, grant(e.token, e.rev), ttl)
	return err
}

// ReleaseLease purges key on the condition that its last revision is the
// lease's, falling back on a read as ExtendLease does.
func (c *conn) ReleaseLease(ctx context.Context, key, value string, lease driver.Lease) error {
	rev, ok := lease.State.(uint64)
	if !ok {
		return errors.New("nats: release: a lease of another driver")
	}
	return c.release(ctx, key, value, rev)
}

// Release purges key if value holds it, at the revision read from the
// stream leader. It is how the core cleans up after a failed acquisition.
func (c *conn) Release(ctx context.Context, key, value string) error {
	if c.undos.taken(value) {
		return driver.ErrNotHeld // undone in the background
	}
	e, err := c.read(ctx, key, "release")
	if err != nil {
		return err
	}
	if !e.live || e.value != value {
		return driver.ErrNotHeld
	}
	return c.release(ctx, key, value, e.rev)
}

// release purges key on the condition that its last revision is rev.
func (c *conn) release(ctx context.Context, key, value string, rev uint64) error {
	ctx, done := c.bound(ctx)
	defer done()
	subj := c.subject(key)
	sent := false
	for n := 0; n < tries; {
		ack, resent, err := c.send(ctx, purge(subj, rev, c.markerTTL))
		sent = sent || resent
		if err == nil {
			c.releasedAt(subj, ack.Sequence)
			return nil
		}
		if !wrongSequence(err) {
			return fail(ctx, "release", err)
		}
		e, err := c.last(ctx, subj)
		if err != nil {
			return fail(ctx, "release", err)
		}
		c.hints.saw(subj, e)
		switch {
		case e.live && e.value == value && e.rev == rev:
			inFlight(ctx)
			continue
		case e.live && e.value == value:
			rev = e.rev // an extension whose answer was lost
			n++
			continue
		case sent:
			return nil // an earlier sending may have purged it
		}
		return driver.ErrNotHeld
	}
	return driver.ErrNotHeld
}

// releasedAt notes the release of subj at revision rev. It becomes the
// key's hint, the condition of this connection's next acquisition of it,
// if a call of this client waits for the key (the core hands the key to
// it next), or if the connection's watch is not running. Otherwise the
// connection learns rev from its watch, at about the moment when the
// waiters of other clients do: the client that released does not take
// the key back ahead of all of them, one round trip before they hear of
// the release.
func (c *conn) releasedAt(subj string, rev uint64) {
	if c.watcher.running() && !c.watcher.waited(subj[len(c.pre):]) {
		return
	}
	c.hints.set(subj, rev)
}

// read reads key at the stream leader, for the operation op.
func (c *conn) read(ctx context.Context, key, op string) (entry, error) {
	ctx, done := c.bound(ctx)
	defer done()
	e, err := c.last(ctx, c.subject(key))
	if err != nil {
		return e, fail(ctx, op, err)
	}
	return e, nil
}

// Inspect reads key at the stream leader. The TTL it reports is the
// holder's, less the time since the server stored the holder's last
// write, by the client's clock.
func (c *conn) Inspect(ctx context.Context, key string) (driver.Holder, bool, error) {
	e, err := c.read(ctx, key, "inspect")
	if err != nil || !e.live {
		return driver.Holder{}, false, err
	}
	left := min(max(e.ttl-time.Since(e.at), 0), e.ttl)
	return driver.Holder{Value: e.value, TTL: left, Lease: grant(e.token, e.rev)}, true, nil
}

// Ping reads the bucket's stream at its leader, and checks it as Connect
// does.
func (c *conn) Ping(ctx context.Context) error {
	ctx, done := c.bound(ctx)
	defer done()
	if err := c.check(ctx, false); err != nil {
		return fail(ctx, "ping", err)
	}
	return nil
}

// Watch subscribes to releases of key (see watcher).
func (c *conn) Watch(ctx context.Context, key string) (driver.Watch, error) {
	ctx, done := c.bound(ctx)
	defer done()
	w, err := c.watcher.watch(ctx, base64.RawURLEncoding.EncodeToString([]byte(key)))
	if err != nil {
		return nil, fail(ctx, "watch", err)
	}
	return w, nil
}

// ErrNotScratch is Drop's error for the default bucket, which is shared
// by every program that names none. It matches driver.ErrMisconfigured.
var ErrNotScratch = fmt.Errorf("%w: not a scratch bucket", driver.ErrMisconfigured)

// Drop deletes the bucket, and refuses with [ErrNotScratch] for the
// default bucket. A bucket the driver creates starts its revisions past
// every earlier one (see DESIGN.md), so tokens of a bucket made again
// still grow.
func (c *conn) Drop(ctx context.Context) error {
	if c.cfg.Bucket == DefaultBucket {
		return fmt.Errorf("nats: drop: %w: %s is the default bucket; name one of its own with the bucket parameter", ErrNotScratch, DefaultBucket)
	}
	ctx, done := c.bound(ctx)
	defer done()
	if err := c.js.DeleteKeyValue(ctx, c.cfg.Bucket); err != nil && !errors.Is(err, jetstream.ErrBucketNotFound) {
		return fail(ctx, "drop", err)
	}
	return nil
}

// closeWait bounds how long Close waits for nats.go to close a
// connection the driver made.
const closeWait = time.Second

// Close ends the calls in flight and the watch, and closes the nats.Conn
// if the driver made it. Locks still held expire by their TTL.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		c.stop()
		c.undos.wait()
		c.watcher.close()
		if !c.own {
			return
		}
		closed := make(chan struct{})
		go func() {
			c.nc.Close()
			close(closed)
		}()
		t := time.NewTimer(closeWait)
		defer t.Stop()
		select {
		case <-closed:
		case <-t.C:
		}
	})
	return nil
}

// hintLimit bounds the keys whose revision a connection remembers.
const hintLimit = 4096

// hints are the revisions of the markers (of releases and expiries) a
// connection last saw of keys: the condition of its next acquisition of
// each. A key without a hint is taken on the condition that it has no
// message at all. A wrong hint costs a read, never safety, since the
// stream leader checks every condition. A key known to be held has no
// hint, so that an acquisition never writes over a holder.
type hints struct {
	mu  sync.Mutex
	rev map[string]uint64
}

func (h *hints) get(subj string) uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rev[subj]
}

// saw records what a read of subj found.
func (h *hints) saw(subj string, e entry) {
	if e.live {
		h.drop(subj)
		return
	}
	h.set(subj, e.rev)
}

func (h *hints) drop(subj string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.rev, subj)
}

func (h *hints) set(subj string, rev uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rev == nil || len(h.rev) >= hintLimit {
		h.rev = make(map[string]uint64)
	}
	h.rev[subj] = rev
}
