package mongodb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/distlock/lock/driver"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
)

// grant is a grant document; see "Documents" in the package documentation.
type grant struct {
	Key      string        `bson:"key"`
	Fence    int64         `bson:"fence"`
	Value    string        `bson:"value"`
	Expires  bson.DateTime `bson:"expires"`
	Created  bson.DateTime `bson:"created"`
	Released bool          `bson:"released"`
}

// latest is the part of a key's latest grant that Acquire and Inspect read.
type latest struct {
	Fence    int64         `bson:"fence"`
	Value    string        `bson:"value"`
	Expires  bson.DateTime `bson:"expires"`
	Released bool          `bson:"released"`
}

// heldAt reports whether the grant may still be held when the server's
// clock reads no earlier than lo.
func (g *latest) heldAt(lo time.Time) bool {
	return !g.Released && floorMillis(lo) < g.Expires
}

// insertGrace bounds the time from the start of an acquisition's find to
// the acknowledgement of its insert, and is how old a grant must be before
// the grants it superseded are deleted. See "Housekeeping" in the package
// documentation.
const insertGrace = 10 * time.Second

var (
	findLatest = options.FindOne().
		SetSort(bson.D{{Key: "fence", Value: -1}}).
		SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: "fence", Value: 1}, {Key: "value", Value: 1}, {Key: "expires", Value: 1}, {Key: "released", Value: 1}})
)

// conn is a connection: a mongo.Client, the grants collection, the
// server's clock and the housekeeper.
type conn struct {
	client *mongo.Client
	owned  bool // the client is ours to disconnect
	coll   *mongo.Collection
	clock  *serverClock
	hk     *housekeeper
}

var (
	_ driver.Conn      = (*conn)(nil)
	_ driver.Extender  = (*conn)(nil)
	_ driver.Pinger    = (*conn)(nil)
	_ driver.Inspector = (*conn)(nil)
)

func newConn(ctx context.Context, client *mongo.Client, owned bool, cfg Config) (*conn, error) {
	coll := client.Database(cfg.Database).Collection(cfg.Collection, options.Collection().
		SetWriteConcern(cfg.WriteConcern).
		SetReadConcern(cfg.ReadConcern).
		SetReadPreference(readpref.Primary()))
	if err := ensureSchema(ctx, coll, !cfg.NoCreate); err != nil {
		return nil, err
	}
	clock := &serverClock{db: client.Database("admin")}
	if err := clock.measure(ctx); err != nil {
		return nil, fmt.Errorf("mongodb: %w", err)
	}
	c := &conn{client: client, owned: owned, coll: coll, clock: clock}
	c.hk = startHousekeeper(coll, clock, !cfg.NoPrune)
	return c, nil
}

// Acquire reads the key's latest grant and, if it is free, inserts the
// next one.
func (c *conn) Acquire(ctx context.Context, key, value string, ttl time.Duration) (driver.Lease, error) {
	c0 := time.Now()
	lo, hi := c.clock.bounds(c0)
	// The insert must be acknowledged within insertGrace of c0, or the
	// grant it builds on may have been pruned (see Housekeeping).
	ctx, cancel := context.WithDeadline(ctx, c0.Add(insertGrace))
	defer cancel()

	fence := int64(1)
	var g latest
	err := c.coll.FindOne(ctx, bson.D{{Key: "key", Value: key}}, findLatest).Decode(&g)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
	case err != nil:
		return driver.Lease{}, fmt.Errorf("mongodb: reading the latest grant: %w", err)
	case g.heldAt(lo):
		return driver.Lease{}, driver.ErrHeld
	default:
		fence = g.Fence + 1
	}
	created := ceilMillis(c.clock.hiNow())
	_, err = c.coll.InsertOne(ctx, &grant{
		Key:     key,
		Fence:   fence,
		Value:   value,
		Expires: ceilMillis(hi.Add(ttl)),
		Created: created,
	})
	if mongo.IsDuplicateKeyError(err) {
		return driver.Lease{}, fmt.Errorf("%w: another acquirer took fence %d first", driver.ErrHeld, fence)
	}
	if err != nil {
		return driver.Lease{}, fmt.Errorf("mongodb: inserting a grant: %w", err)
	}
	if fence > 1 {
		c.hk.supersede(key, fence, created)
	}
	return driver.Lease{Token: uint64(fence), Fenced: true}, nil
}

// Extend moves the expiry of value's grant, if the lease cannot have ended.
func (c *conn) Extend(ctx context.Context, key, value string, ttl time.Duration) error {
	_, hi := c.clock.bounds(time.Now())
	res, err := c.coll.UpdateOne(ctx,
		bson.D{
			{Key: "key", Value: key},
			{Key: "value", Value: value},
			{Key: "released", Value: false},
			{Key: "expires", Value: bson.D{{Key: "$gt", Value: ceilMillis(hi)}}},
		},
		bson.D{{Key: "$max", Value: bson.D{{Key: "expires", Value: ceilMillis(hi.Add(ttl))}}}})
	if err != nil {
		return fmt.Errorf("mongodb: extending: %w", err)
	}
	if res.MatchedCount == 0 {
		return driver.ErrNotHeld
	}
	return nil
}

// Release marks value's grant released, if the lease may not have ended.
func (c *conn) Release(ctx context.Context, key, value string) error {
	lo, _ := c.clock.bounds(time.Now())
	res, err := c.coll.UpdateOne(ctx,
		bson.D{
			{Key: "key", Value: key},
			{Key: "value", Value: value},
			{Key: "released", Value: false},
			{Key: "expires", Value: bson.D{{Key: "$gt", Value: floorMillis(lo)}}},
		},
		bson.D{{Key: "$set", Value: bson.D{{Key: "released", Value: true}}}})
	if err != nil {
		return fmt.Errorf("mongodb: releasing: %w", err)
	}
	if res.MatchedCount == 0 {
		return driver.ErrNotHeld
	}
	return nil
}

// Inspect reports the holder of the key's latest grant, if it may still
// hold it.
func (c *conn) Inspect(ctx context.Context, key string) (driver.Holder, bool, error) {
	now := time.Now()
	var g latest
	err := c.coll.FindOne(ctx, bson.D{{Key: "key", Value: key}}, findLatest).Decode(&g)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return driver.Holder{}, false, nil
	}
	if err != nil {
		return driver.Holder{}, false, fmt.Errorf("mongodb: reading the latest grant: %w", err)
	}
	lo, _ := c.clock.bounds(now)
	if !g.heldAt(lo) {
		return driver.Holder{}, false, nil
	}
	return driver.Holder{
		Value: g.Value,
		TTL:   g.Expires.Time().Sub(lo),
		Lease: driver.Lease{Token: uint64(g.Fence), Fenced: true},
	}, true, nil
}

// Ping checks that the primary answers.
func (c *conn) Ping(ctx context.Context) error {
	if err := c.client.Ping(ctx, readpref.Primary()); err != nil {
		return fmt.Errorf("mongodb: %w", err)
	}
	return nil
}

// closeTimeout bounds disconnecting a client of our own.
const closeTimeout = 5 * time.Second

// Close stops the housekeeper and disconnects the client if it is the
// connection's own.
func (c *conn) Close() error {
	c.hk.stop()
	if !c.owned {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	if err := c.client.Disconnect(ctx); err != nil {
		return fmt.Errorf("mongodb: %w", err)
	}
	return nil
}
