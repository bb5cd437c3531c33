package mongodb

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/distlock/lock/driver"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// grant is a grant document; see "Documents" in DESIGN.md.
type grant struct {
	ID       string        `bson:"_id"`
	Key      string        `bson:"key"`
	Fence    int64         `bson:"fence"`
	Value    string        `bson:"value"`
	Expires  bson.DateTime `bson:"expires"`
	Released bool          `bson:"released"`
	Created  bson.DateTime `bson:"created,omitempty"` // tombstones: at most the server's clock when inserted
}

// youngAt reports whether g is a tombstone created recently enough, for
// an attempt whose clock reading c0 has upper bound hi, that the attempt
// may insert its successor without reading it again (see "Young
// tombstones" in DESIGN.md).
func (g *grant) youngAt(hi time.Time) bool {
	return g.Released && g.Created != 0 && g.Created > ceilMillis(hi.Add(-youngWindow()))
}

// head is a key's head document: a hint, never trusted for safety.
type head struct {
	Fence  int64 `bson:"fence"`  // a fence that was inserted (not necessarily the latest)
	Pruned int64 `bson:"pruned"` // every grant below it has been deleted
}

// heldAt reports whether the grant may still be held when the server's
// clock reads no earlier than lo.
func (g *grant) heldAt(lo time.Time) bool {
	return !g.Released && floorMillis(lo) < g.Expires
}

// grantID is the _id of key's grant with fence f: a fixed-width prefix,
// so that distinct (key, fence) pairs get distinct ids.
func grantID(key string, f int64) string {
	var b []byte
	b = make([]byte, 0, 22+len(key))
	b = append(b, 'g')
	s := strconv.AppendInt(make([]byte, 0, 20), f, 10)
	for range 20 - len(s) {
		b = append(b, '0')
	}
	b = append(b, s...)
	b = append(b, ':')
	return string(append(b, key...))
}

// headID is the _id of key's head document. It starts with 'h', every
// grant's with 'g'.
func headID(key string) string { return "h:" + key }

// Timing; see "Safety" and "Housekeeping" in DESIGN.md.
// Variables only so that tests can shorten them (together).
var (
	// insertGrace bounds an acquisition attempt, from before its first
	// read to its insert.
	insertGrace = 10 * time.Second
	// pruneDelay is how long after a grant's insert was acknowledged the
	// grants below it may be deleted. It exceeds insertGrace by a margin
	// for requests the server executes after their sender gave up.
	pruneDelay = 30 * time.Second
)

// serverLag bounds how long after its attempt's deadline the server may
// execute an insert: assumption (4) of "Safety" in DESIGN.md.
const serverLag = 15 * time.Second

// youngWindow is how recent a tombstone must be for Acquire to insert its
// successor without reading it again after the probe.
func youngWindow() time.Duration { return pruneDelay - insertGrace - serverLag }

const (
	// maxProbes bounds the forward probes of one discovery.
	maxProbes = 256
	// headJump is how many probes discovery makes before it looks at the
	// head document for a shortcut.
	headJump = 16
	// maxCached bounds the per-connection caches; past it they are emptied.
	maxCached = 100_000
)

// known is what a connection remembers of a key: a fence that was
// inserted, and the grant with that fence as it was read or written (nil
// if not). The grant is only used to answer ErrHeld: a grant that was held
// stays held, by the same bound, until its successor exists (Release is
// the insert of a successor, and Extend only raises expires).
type known struct {
	fence int64
	g     *grant
}

// lease is what a connection remembers of a grant it inserted.
type lease struct {
	key      string
	fence    int64
	expires  bson.DateTime
	released bool
}

// conn is a connection: a mongo.Client, the grants collection, the
// server's clock, what it knows of keys and its own leases, and the
// housekeeper.
type conn struct {
	client  *mongo.Client
	owned   bool   // the client is ours to disconnect
	reach   *reach // watches the client's heartbeats, if the client is ours
	timeout time.Duration
	coll    *mongo.Collection
	wc      *writeconcern.WriteConcern // coll's, for the settings check
	rc      *readconcern.ReadConcern   // coll's, for the settings check
	clock   *serverClock
	hk      *housekeeper
	scratch error // nil if Drop may drop the collection, else why not

	mu       sync.Mutex
	latest   map[string]known    // key -> the highest fence known to have been inserted
	leases   map[string]*lease   // value -> its grant
	inflight map[string]*attempt // key -> the Acquire of it in progress
}

var (
	_ driver.Conn      = (*conn)(nil)
	_ driver.Extender  = (*conn)(nil)
	_ driver.Pinger    = (*conn)(nil)
	_ driver.Inspector = (*conn)(nil)
	_ driver.Dropper   = (*conn)(nil)
)

func newConn(ctx context.Context, client *mongo.Client, r *reach, cfg Config) (*conn, error) {
	coll := client.Database(cfg.Database).Collection(cfg.Collection, options.Collection().
		SetWriteConcern(cfg.WriteConcern).
		SetReadConcern(cfg.ReadConcern).
		SetReadPreference(readpref.Primary()))
	clock := &serverClock{db: client.Database("admin")}
	// Both at once: connecting is on the first operation's path.
	var clockErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		clockErr = clock.measure(ctx, 1) // the housekeeper refines it at once
	}()
	schemaErr := ensureSchema(ctx, coll, !cfg.NoCreate)
	<-done
	if clockErr != nil {
		clockErr = fmt.Errorf("mongodb: %w", clockErr)
	}
	if err := credentialsFirst(schemaErr, clockErr); err != nil {
		return nil, err
	}
	c := &conn{
		client: client, owned: r != nil, reach: r, timeout: cfg.RequestTimeout, coll: coll, clock: clock,
		wc: cfg.WriteConcern, rc: cfg.ReadConcern, scratch: scratchCollection(cfg),
		latest:   make(map[string]known),
		leases:   make(map[string]*lease),
		inflight: make(map[string]*attempt),
	}
	c.hk = startHousekeeper(coll, clock, !cfg.NoPrune, c.sweep)
	return c, nil
}

// known returns the latest fence of key the connection knows of, and its
// grant if known.
func (c *conn) known(key string) (known, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.latest[key]
	return k, ok
}

// learn notes that key's grant f was inserted, and what it is if g is
// not nil.
func (c *conn) learn(key string, f int64, g *grant) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k, ok := c.latest[key]; ok && (f < k.fence || f == k.fence && g == nil) {
		return
	}
	if len(c.latest) >= maxCached {
		clear(c.latest)
	}
	c.latest[key] = known{f, g}
}

// readGrant reads key's grant f by _id.
func (c *conn) readGrant(ctx context.Context, key string, f int64) (*grant, bool, error) {
	var g grant
	err := c.coll.FindOne(ctx, bson.D{{Key: "_id", Value: grantID(key, f)}}).Decode(&g)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("mongodb: reading grant %d: %w", f, err)
	}
	return &g, true, nil
}

// readHead reads key's head document.
func (c *conn) readHead(ctx context.Context, key string) (head, bool, error) {
	var h head
	err := c.coll.FindOne(ctx, bson.D{{Key: "_id", Value: headID(key)}}).Decode(&h)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return head{}, false, nil
	}
	if err != nil {
		return head{}, false, fmt.Errorf("mongodb: reading the head document: %w", err)
	}
	return h, true, nil
}

// scanLatest finds key's highest grant with a query on the key: the slow
// path (FerretDB evaluates it over the whole collection), taken only when
// the hints led to pruned grants.
func (c *conn) scanLatest(ctx context.Context, key string) (int64, error) {
	var g struct {
		Fence int64 `bson:"fence"`
	}
	err := c.coll.FindOne(ctx, bson.D{{Key: "key", Value: key}}, options.FindOne().
		SetSort(bson.D{{Key: "fence", Value: -1}}).
		SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: "fence", Value: 1}})).Decode(&g)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("mongodb: scanning for the latest grant: %w", err)
	}
	return g.Fence, nil
}

// probe is the result of reading a grant.
type probe struct {
	g     *grant
	found bool
}

// errDiscovery reports a discovery that did not converge.
var errDiscovery = errors.New("mongodb: could not find the key's latest grant: it kept moving or its grants kept being pruned")

// discover finds key's latest grant. It returns its fence h and the
// grant (nil when h is 0) such that, after the call began, a read found
// grant h+1 absent and a later read found grant h present (or, for h == 0,
// the key's head document absent): the pair of reads that "Discovery" in
// DESIGN.md needs. Where the starting fence came from only matters for
// speed.
//
// Once h+1 is found absent, discovery returns grant h without reading it
// again if it is held by the bound heldAt (held is true: an ErrHeld, which
// needs no ordering of reads), or a tombstone young by the bound young
// (see grant.youngAt). A zero bound turns its shortcut off.
func (c *conn) discover(ctx context.Context, key string, heldAt, young time.Time) (h int64, g *grant, held bool, err error) {
	k, ok := c.known(key)
	h = k.fence
	prev := k.g // grant h, if known (only for ErrHeld)
	// For a key it does not know, discovery reads the head and grant 1 at
	// once: the head usually lags or is missing (it is raised every
	// headEvery fences), and grant 1 is where it would start then.
	var first *probe
	if !ok {
		var hd head
		var herr error
		done := make(chan struct{})
		go func() {
			defer close(done)
			hd, _, herr = c.readHead(ctx, key)
		}()
		g1, found1, err1 := c.readGrant(ctx, key, 1)
		<-done
		if herr != nil {
			return 0, nil, false, credentialsFirst(herr, err1)
		}
		h = max(hd.Fence, hd.Pruned)
		if h == 0 {
			if err1 != nil {
				return 0, nil, false, err1
			}
			first = &probe{g1, found1}
		}
	}
	probes, restarts, jumped, scanned := 0, 0, false, false
	for {
		var next *grant
		var found bool
		if first != nil {
			next, found, first = first.g, first.found, nil
		} else if next, found, err = c.readGrant(ctx, key, h+1); err != nil {
			return 0, nil, false, err
		}
		if found {
			h++
			prev = next
			c.learn(key, h, next)
			if probes++; probes > maxProbes {
				return 0, nil, false, errDiscovery
			}
			if probes == headJump && !jumped {
				jumped = true
				hd, _, err := c.readHead(ctx, key)
				if err != nil {
					return 0, nil, false, err
				}
				if n := max(hd.Fence, hd.Pruned); n > h {
					h, prev = n, nil
				}
			}
			continue
		}
		if prev != nil && !heldAt.IsZero() && prev.heldAt(heldAt) {
			return h, prev, true, nil
		}
		if prev != nil && !young.IsZero() && prev.youngAt(young) {
			return h, prev, false, nil
		}
		// grant h+1 is absent: read grant h (or the head, for h == 0)
		// after that.
		if h == 0 {
			hd, exists, err := c.readHead(ctx, key)
			if err != nil {
				return 0, nil, false, err
			}
			if !exists || max(hd.Fence, hd.Pruned) == 0 {
				return 0, nil, false, nil
			}
			h, prev = max(hd.Fence, hd.Pruned), nil
		} else {
			g, found, err := c.readGrant(ctx, key, h)
			if err != nil {
				return 0, nil, false, err
			}
			if found {
				c.learn(key, h, g)
				return h, g, false, nil
			}
			// grant h was pruned: start again higher.
			hd, _, err := c.readHead(ctx, key)
			if err != nil {
				return 0, nil, false, err
			}
			prev = nil
			if n := max(hd.Fence, hd.Pruned); n > h {
				h = n
			} else if !scanned {
				scanned = true
				n, err := c.scanLatest(ctx, key)
				if err != nil {
					return 0, nil, false, err
				}
				h = max(h, n)
			}
		}
		if restarts++; restarts > 8 {
			return 0, nil, false, errDiscovery
		}
	}
}

// attempt is an Acquire in progress; done is closed when it ends, held
// then says whether it ended with the key held (by it or by another).
type attempt struct {
	done chan struct{}
	held bool
}

// Acquire finds the key's latest grant and, if it is free, inserts the
// next one. Concurrent Acquires of one key on one connection take turns:
// one that finds another in progress waits for it, and if that one took
// the key or found it held, returns ErrHeld without asking the server
// (the key is held); if it failed otherwise, tries itself. On FerretDB,
// concurrent inserts of one fence queue for SQLite's write lock, so this
// spares the server the inserts that would have lost anyway.
func (c *conn) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	cctx, end := begin(ctx, c.timeout, c.reach)
	defer end()
	l, err := c.acquireInTurn(cctx, key, value, ttl)
	return l, fail(ctx, cctx, c.timeout, err)
}

// acquireInTurn is Acquire, once the call's context is set.
func (c *conn) acquireInTurn(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	for {
		c.mu.Lock()
		a := c.inflight[key]
		if a == nil {
			a = &attempt{done: make(chan struct{})}
			c.inflight[key] = a
			c.mu.Unlock()
			l, err := c.acquire(ctx, key, value, ttl)
			a.held = err == nil || errors.Is(err, driver.ErrHeld)
			c.mu.Lock()
			delete(c.inflight, key)
			c.mu.Unlock()
			close(a.done)
			return l, err
		}
		c.mu.Unlock()
		select {
		case <-a.done:
		case <-ctx.Done():
			return driver.Lease{}, fmt.Errorf("mongodb: waiting for another acquisition of the key on this connection: %w", ctx.Err())
		}
		if a.held {
			return driver.Lease{}, fmt.Errorf("%w: another acquisition on this connection found it held or took it", driver.ErrHeld)
		}
	}
}

// acquire is one attempt of Acquire.
func (c *conn) acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	c0 := time.Now()
	lo, hi := c.clock.bounds(c0)
	// The insert must be done within insertGrace of c0 (see "Inserts" in
	// DESIGN.md).
	ctx, cancel := context.WithDeadline(ctx, c0.Add(insertGrace))
	defer cancel()

	h, g, _, err := c.discover(ctx, key, lo, hi)
	if err != nil {
		return driver.Lease{}, err
	}
	if g != nil && g.heldAt(lo) {
		return driver.Lease{}, driver.ErrHeld
	}
	f := h + 1
	expires := ceilMillis(hi.Add(ttl))
	mine := &grant{
		ID:      grantID(key, f),
		Key:     key,
		Fence:   f,
		Value:   value,
		Expires: expires,
	}
	_, err = c.coll.InsertOne(ctx, mine)
	if mongo.IsDuplicateKeyError(err) {
		c.learn(key, f, nil)
		return driver.Lease{}, fmt.Errorf("%w: another acquirer took fence %d first", driver.ErrHeld, f)
	}
	if err != nil {
		return driver.Lease{}, fmt.Errorf("mongodb: inserting a grant: %w", sent{err})
	}
	acked := time.Now()
	c.learn(key, f, mine)
	c.mu.Lock()
	if len(c.leases) >= maxCached {
		c.sweepLocked(time.Now())
	}
	if len(c.leases) < maxCached {
		c.leases[value] = &lease{key: key, fence: f, expires: expires}
	}
	c.mu.Unlock()
	c.hk.inserted(key, f, acked)
	return driver.Lease{Token: uint64(f), Fenced: true}, nil
}

// sweep forgets the leases that have certainly ended.
func (c *conn) sweep(now time.Time) {
	c.mu.Lock()
	c.sweepLocked(now)
	c.mu.Unlock()
}

func (c *conn) sweepLocked(now time.Time) {
	lo, _ := c.clock.bounds(now)
	t := floorMillis(lo)
	for v, l := range c.leases {
		if l.released || l.expires <= t {
			delete(c.leases, v)
		}
	}
}

// holding returns value's grant on key: from the connection's memory if
// it inserted it, else read from the server. ok is false if value does not
// hold the latest grant.
func (c *conn) holding(ctx context.Context, key, value string) (l lease, mine, ok bool, err error) {
	c.mu.Lock()
	if p := c.leases[value]; p != nil && p.key == key {
		l = *p
		c.mu.Unlock()
		return l, true, true, nil
	}
	c.mu.Unlock()
	h, g, _, err := c.discover(ctx, key, time.Time{}, time.Time{})
	if err != nil || h == 0 || g.Value != value {
		return lease{}, false, false, err
	}
	return lease{key: key, fence: h, expires: g.Expires, released: g.Released}, false, true, nil
}

// Extend moves the expiry of value's grant, if the lease cannot have ended.
func (c *conn) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	cctx, end := begin(ctx, c.timeout, c.reach)
	defer end()
	return fail(ctx, cctx, c.timeout, c.extend(cctx, key, value, ttl))
}

func (c *conn) extend(ctx context.Context, key, value string, ttl time.Duration) error {
	_, hi := c.clock.bounds(time.Now())
	l, mine, ok, err := c.holding(ctx, key, value)
	if err != nil {
		return fmt.Errorf("mongodb: extending: %w", err)
	}
	if !ok || l.released || l.expires <= ceilMillis(hi) {
		return driver.ErrNotHeld
	}
	expires := ceilMillis(hi.Add(ttl))
	res, err := c.coll.UpdateOne(ctx,
		bson.D{{Key: "_id", Value: grantID(key, l.fence)}},
		bson.D{{Key: "$max", Value: bson.D{{Key: "expires", Value: expires}}}})
	if err != nil {
		return fmt.Errorf("mongodb: extending: %w", err)
	}
	if res.MatchedCount == 0 {
		return driver.ErrNotHeld
	}
	if mine {
		c.mu.Lock()
		if p := c.leases[value]; p != nil && p.expires < expires {
			p.expires = expires
		}
		c.mu.Unlock()
	}
	return nil
}

// Release inserts the grant that follows value's, released at birth (a
// tombstone), if value's lease has certainly not ended by the server's
// clock. A duplicate key means another acquirer inserted that fence first:
// the lease had ended.
func (c *conn) Release(ctx context.Context, key, value string) error {
	cctx, end := begin(ctx, c.timeout, c.reach)
	defer end()
	return fail(ctx, cctx, c.timeout, c.release(cctx, key, value))
}

func (c *conn) release(ctx context.Context, key, value string) error {
	s := time.Now()
	_, hi := c.clock.bounds(s)
	// The tombstone must land within insertGrace of s (see "Inserts" in
	// DESIGN.md).
	ctx, cancel := context.WithDeadline(ctx, s.Add(insertGrace))
	defer cancel()
	l, mine, ok, err := c.holding(ctx, key, value)
	if err != nil {
		return fmt.Errorf("mongodb: releasing: %w", err)
	}
	if mine {
		c.mu.Lock()
		delete(c.leases, value)
		c.mu.Unlock()
	}
	if !ok || l.released || l.expires <= ceilMillis(hi) {
		return driver.ErrNotHeld
	}
	f := l.fence + 1
	created, _ := c.clock.bounds(time.Now())
	tomb := &grant{ID: grantID(key, f), Key: key, Fence: f, Released: true, Created: floorMillis(created)}
	_, err = c.coll.InsertOne(ctx, tomb)
	if mongo.IsDuplicateKeyError(err) {
		c.learn(key, f, nil)
		return driver.ErrNotHeld
	}
	if err != nil {
		return fmt.Errorf("mongodb: releasing: %w", err)
	}
	c.learn(key, f, tomb)
	c.hk.inserted(key, f, time.Now())
	return nil
}

// Inspect reports the holder of the key's latest grant, if it may still
// hold it.
func (c *conn) Inspect(ctx context.Context, key string) (driver.Holder, bool, error) {
	cctx, end := begin(ctx, c.timeout, c.reach)
	defer end()
	h, ok, err := c.inspect(cctx, key)
	return h, ok, fail(ctx, cctx, c.timeout, err)
}

func (c *conn) inspect(ctx context.Context, key string) (driver.Holder, bool, error) {
	now := time.Now()
	h, g, _, err := c.discover(ctx, key, time.Time{}, time.Time{})
	if err != nil {
		return driver.Holder{}, false, err
	}
	lo, hi := c.clock.bounds(now)
	if h == 0 || !g.heldAt(lo) {
		return driver.Holder{}, false, nil
	}
	// The time left is reported from the upper bound of the server's clock,
	// less the millisecond the grant's expiry was rounded up by: a lower
	// bound, so that it never exceeds the TTL the holder asked for (from the
	// lower bound, it would by the clock's uncertainty). In a lease's last
	// milliseconds, where the bounds disagree, it is a millisecond.
	left := g.Expires.Time().Sub(hi) - clockResolution
	return driver.Holder{
		Value: g.Value,
		TTL:   max(left, time.Millisecond),
		Lease: driver.Lease{Token: uint64(g.Fence), Fenced: true},
	}, true, nil
}

// ErrNotScratch is Drop's error for a collection that is not a scratch
// collection of its own: the default collection, or one the driver was
// told not to create. It matches driver.ErrMisconfigured.
var ErrNotScratch = fmt.Errorf("%w: not a scratch collection", driver.ErrMisconfigured)

// scratchCollection returns nil if the collection of cfg is one Drop may
// delete, and otherwise why not. The default collection is shared by
// every program that names none, in any database, and a collection the
// driver may not create belongs to the database's owner.
func scratchCollection(cfg Config) error {
	switch {
	case cfg.Collection == DefaultCollection:
		return fmt.Errorf("%w: %s.%s is the default collection; name one of its own with distlock_collection",
			ErrNotScratch, cfg.Database, cfg.Collection)
	case cfg.NoCreate:
		return fmt.Errorf("%w: collection %s.%s is not the driver's to create (%s=false), so not its to drop",
			ErrNotScratch, cfg.Database, cfg.Collection, paramCreate)
	}
	return nil
}

// Drop deletes the grants collection, with every grant in it, and refuses
// with [ErrNotScratch] for the default collection or one the driver may
// not create. The connection first forgets what it knew of keys and
// leases, and its housekeeper its pending work, so that nothing it does
// later writes to a collection of the same name made again. Other
// connections should be closed first: their inserts would make the
// collection again. Tokens of a collection made again start from 1.
func (c *conn) Drop(ctx context.Context) error {
	if c.scratch != nil {
		return fmt.Errorf("mongodb: drop: %w", c.scratch)
	}
	cctx, end := begin(ctx, c.timeout, c.reach)
	defer end()
	if err := c.hk.forget(cctx); err != nil {
		return fail(ctx, cctx, c.timeout, fmt.Errorf("mongodb: drop: %w", err))
	}
	c.forgetKeys()
	err := c.coll.Drop(cctx)
	c.forgetKeys() // and what calls in flight learnt meanwhile
	if err != nil {
		return fail(ctx, cctx, c.timeout, fmt.Errorf("mongodb: drop: %w", err))
	}
	return nil
}

// forgetKeys empties the connection's caches of keys and leases.
func (c *conn) forgetKeys() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.latest)
	clear(c.leases)
}

// Ping checks that the primary answers.
func (c *conn) Ping(ctx context.Context) error {
	cctx, end := begin(ctx, c.timeout, c.reach)
	defer end()
	if err := c.client.Ping(cctx, readpref.Primary()); err != nil {
		return fail(ctx, cctx, c.timeout, fmt.Errorf("mongodb: %w", err))
	}
	return nil
}

// Close stops the housekeeper and disconnects the client if it is the
// connection's own, within the request timeout: ending the client's
// sessions is a request, which a silent server never answers.
func (c *conn) Close() error {
	c.hk.stop()
	if !c.owned {
		return nil
	}
	ctx, end := begin(context.Background(), c.timeout, c.reach)
	defer end()
	if err := c.client.Disconnect(ctx); err != nil {
		return fmt.Errorf("mongodb: %w", err)
	}
	return nil
}
