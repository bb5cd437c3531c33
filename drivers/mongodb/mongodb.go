// Package mongodb is a lock driver for MongoDB and servers that speak its
// wire protocol (FerretDB among them), registered as "mongodb", over
// go.mongodb.org/mongo-driver/v2. Every acquisition inserts a grant document
// of its own; a unique index on (key, fence) decides who wins; expiry is
// judged by the server's clock; fencing tokens are the fences.
//
//	import _ "github.com/distlock/lock/drivers/mongodb"
//
//	c, err := lock.Open("mongodb", "mongodb://db1,db2,db3/?replicaSet=rs0&distlock_database=app")
//
// A program that already has a client hands it to [New] instead:
//
//	connector, err := mongodb.New(client, mongodb.Config{Database: "app"})
//	c := lock.OpenConnector(connector)
//
// # DSN
//
// The DSN is a mongodb:// connection string, with every option the Go
// driver knows. The driver's own parameters, which it removes before
// handing the rest to the Go driver, are:
//
//	distlock_database           the database (default: the URI's path, else "distlock")
//	distlock_collection         the grants collection (default "distlock_grants")
//	distlock_create_collection  true (the default): create the collection and its index if missing;
//	                            false: leave the schema alone, and only check that the index exists
//	distlock_prune              true (the default): delete superseded grants (see Housekeeping)
//
// Any other parameter starting with "distlock_" is an error. A
// mongodb+srv:// string is refused, because resolving it contacts DNS and
// lock.Open must not contact anything: resolve it with the Go driver and
// use [New]. lock.Open reports a malformed DSN without contacting the
// server; no error, and no String method, repeats a password. Each
// lock.Client opened on a DSN gets a mongo.Client (a pool) of its own.
//
// # Consistency settings
//
// Unless the DSN says otherwise, writes use write concern {w: "majority",
// j: true} and the read that decides ownership uses read concern
// "majority". The DSN's own w, journal, wtimeoutMS and readConcernLevel
// options, when present, are used instead; with [New], [Config.WriteConcern]
// and [Config.ReadConcern] (nil means the defaults above; the client's own
// settings are not used, so that a weaker client default does not weaken
// the locks silently). See Guarantees for what weaker settings cost.
//
// # Documents
//
// The collection holds one document per acquisition, a grant:
//
//	{_id: ObjectId, key: string, fence: int64, value: string,
//	 expires: date, created: date, released: bool}
//
// with a unique index {key: 1, fence: 1} named distlock_key_fence. A key's
// latest grant (highest fence) says who holds it: its value holds the key
// until expires, by the server's clock, unless released is true.
//
// # Operations and round trips
//
//   - Acquire: find the key's latest grant (one find: filter {key},
//     sort {fence: -1}, limit 1, majority read concern). If it is held,
//     return ErrHeld: one round trip, no write. Otherwise insert a grant
//     with fence+1 (1 for a new key): two round trips. If the insert fails
//     with a duplicate-key error, another acquirer inserted that fence
//     first: ErrHeld.
//   - Extend: one updateOne on the holder's own grant, filtered on {key,
//     value, released: false, expires > the latest the server's clock can
//     read now}, setting expires with $max (a lease is never shortened).
//     No match: ErrNotHeld.
//   - Release: one updateOne on the holder's own grant, filtered on {key,
//     value, released: false, expires > the earliest the server's clock can
//     read now}, setting released: true. No match: ErrNotHeld.
//
// An uncontended acquisition and release is three round trips.
//
// # Safety
//
// The argument needs exactly these server operations to be atomic and
// durable: (1) an insert into a collection with a unique index either
// fails with a duplicate-key error or creates the only document with that
// (key, fence); (2) a find sees every insert and update that was
// acknowledged before it began; (3) the server's clock, read by hello's
// localTime, advances at the rate of real time (within 500 ppm of the
// client's monotonic clock) and is not stepped forward. Updates and deletes
// need no isolation: only a grant's holder updates it, and the core runs one
// operation of a lock at a time; deletes remove only superseded grants. That
// is why the driver works on FerretDB, whose updates, findAndModify and
// deletes are read-modify-write without isolation and which lacks $$NOW,
// $expr, pipeline updates, transactions and change streams: unique-index
// inserts are atomic there, as they are on MongoDB.
//
// Server time. Each connection measures the server's clock with hello: if
// a hello sent at t0 and answered at t1 (client monotonic clock) reports
// localTime L (millisecond precision), the server's clock read at t1 lies in
// [L, L + (t1-t0) + 1ms]. At a later monotonic instant t the driver bounds
// the server's clock by lo(t) = L + (t-t1) - slack and hi(t) = L + (t-t1) +
// (t1-t0) + 1ms + slack, slack being 500 ppm of t-t1. It takes the best of
// three hellos, and measures again every 30 seconds. The client's wall clock
// is never used, so clients' clocks need not agree, and need not agree with
// the server's.
//
// Mutual exclusion. A grant taken with ttl at client instant c0 (after the
// core's clock reading start, which its validity start+ttl-drift counts
// from) gets expires = hi(c0) + ttl, which is at least the server's clock at
// start + ttl: the server's lease outlasts the core's validity. An acquirer
// treats the latest grant as expired only if lo(c0) >= expires, with c0 read
// before its find was sent: then the find ran when the server's clock had
// passed expires, so the holder's validity (by real time) had ended before
// the find ran. An extension is counted by the core only if it returned
// before the holder's validity ended, so a counted extension was applied
// before that find, and the find saw it (operation 2). Any other extension
// is refused by its filter or lands after the acquirer's find, when the core
// no longer counts it (and gives the key back). Of two acquirers that read
// the same latest grant, the unique index lets exactly one insert fence+1
// (operation 1). So two holders' validities never overlap, and a key's
// fences strictly increase: a grant with fence f+1 can only be inserted by
// an acquirer that saw f as the latest.
//
// No revival. Extend's filter requires expires > hi(c0): if the lease may
// have ended when the request was sent, nothing changes. A lease that ends
// while an extension is in flight can be extended on the server; the core
// does not count such an extension, and no acquirer that took the key over
// is affected, because it inserted a newer grant.
//
// The bound. Leases last, by the server's clock, at most ttl + (t1-t0) +
// 1ms + slack longer than asked (the hello's round trip is usually well
// under a millisecond on a LAN): an expired holder's key becomes free that
// much later. An NTP step of the server's clock forward shortens every lease
// by the step, as it does for every lock whose expiry the server judges.
//
// On a MongoDB replica set the argument holds for acknowledged w:"majority"
// writes: such a write survives failover, and a majority read on the
// current primary sees it. During a failover a majority read served by a
// deposed primary that does not know it yet can be stale; if the acquirer's
// insert then reaches the new primary, it can succeed. Read concern
// "linearizable" (readConcernLevel=linearizable) closes that window at the
// cost of a majority round trip per acquisition. With w:1 or a read concern
// weaker than majority, a failover can lose grants, and with them mutual
// exclusion and token order. On FerretDB (one server, SQLite) the concerns
// are accepted and every acknowledged write is visible to later reads.
//
// # Housekeeping
//
// A key's latest grant is never deleted, so its fence never goes back. The
// grants it superseded are deleted by the connection that acquired the key,
// in the background, once the new grant is ten seconds old by the server's
// clock: deleting a superseded grant any sooner could let a slow acquirer,
// which read an older grant as the latest, insert that fence again. So the
// driver gives each acquisition's insert at most those ten seconds from the
// start of its find (an attempt that takes longer fails, and the core
// retries it): such an insert either lands while the older grant still
// exists (a duplicate key) or fails. Grants whose connection closed before
// they were pruned stay until the key is acquired again. Turn pruning off
// with distlock_prune=false or [Config.NoPrune]. (On FerretDB, whose SQLite
// backend scans the whole collection for every query not on _id alone,
// pruning also keeps the driver fast.)
//
// # Wake-ups
//
// The driver does not implement driver.Waiter: announcing releases would
// need change streams, which FerretDB does not have, and which on MongoDB
// need a replica set. Waiters poll at the pace of their retry strategy; a
// released grant lets the next poll succeed at once.
package mongodb

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

func init() {
	lock.Register("mongodb", Driver{})
}

// Defaults of [Config].
const (
	DefaultDatabase   = "distlock"
	DefaultCollection = "distlock_grants"
)

// Driver is the MongoDB driver. Its zero value is ready to use; lock.Open
// uses the one registered as "mongodb".
type Driver struct{}

var _ driver.DriverContext = Driver{}

// Open returns a connection to the server that dsn describes.
func (d Driver) Open(dsn string) (driver.Conn, error) {
	c, err := d.OpenConnector(dsn)
	if err != nil {
		return nil, err
	}
	return c.Connect(context.Background())
}

// OpenConnector parses dsn (see the package documentation) without
// contacting the server.
func (Driver) OpenConnector(dsn string) (driver.Connector, error) {
	s, err := parseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("mongodb: %w", err)
	}
	return newConnector(nil, s.client, s.config)
}

// Config is the driver's own configuration, for [New]. Its zero value asks
// for the defaults.
type Config struct {
	// Database holds the grants collection. Empty means [DefaultDatabase].
	Database string

	// Collection is the grants collection's name. Empty means
	// [DefaultCollection].
	Collection string

	// NoCreate leaves the schema alone: the driver only checks that the
	// collection has its unique index, and never creates anything.
	NoCreate bool

	// NoPrune keeps superseded grants instead of deleting them.
	NoPrune bool

	// WriteConcern is used for every write. Nil means {w: "majority",
	// j: true}.
	WriteConcern *writeconcern.WriteConcern

	// ReadConcern is used for the read that decides whether a key is free.
	// Nil means "majority".
	ReadConcern *readconcern.ReadConcern
}

// New returns a connector that uses client, which the caller keeps and
// disconnects after the clients that use it. Every lock.Client opened on
// the connector shares it.
func New(client *mongo.Client, cfg Config) (*Connector, error) {
	if client == nil {
		return nil, errors.New("mongodb: New: nil client")
	}
	return newConnector(client, nil, cfg)
}

// Connector opens connections to one grants collection. It is a
// [driver.Connector], for lock.OpenConnector, and safe for concurrent use.
type Connector struct {
	client     *mongo.Client          // the caller's, from New; nil otherwise
	clientOpts *options.ClientOptions // from a DSN: each connection gets a client of its own
	cfg        Config                 // with defaults filled in
	hosts      string                 // for String
}

var _ driver.Connector = (*Connector)(nil)

// validName is what the driver accepts as a database or collection name:
// safe on MongoDB and FerretDB alike.
var validName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

func newConnector(client *mongo.Client, opts *options.ClientOptions, cfg Config) (*Connector, error) {
	if cfg.Database == "" {
		cfg.Database = DefaultDatabase
	}
	if cfg.Collection == "" {
		cfg.Collection = DefaultCollection
	}
	if !validName.MatchString(cfg.Database) {
		return nil, fmt.Errorf("mongodb: database name %q: want letters, digits and '_', not starting with a digit, at most 63 bytes", truncate(cfg.Database, 64))
	}
	if !validName.MatchString(cfg.Collection) {
		return nil, fmt.Errorf("mongodb: collection name %q: want letters, digits and '_', not starting with a digit, at most 63 bytes", truncate(cfg.Collection, 64))
	}
	if cfg.WriteConcern == nil {
		cfg.WriteConcern = defaultWriteConcern()
	}
	if cfg.ReadConcern == nil {
		cfg.ReadConcern = readconcern.Majority()
	}
	c := &Connector{client: client, clientOpts: opts, cfg: cfg}
	if opts != nil {
		c.hosts = fmt.Sprint(opts.Hosts)
	}
	return c, nil
}

func defaultWriteConcern() *writeconcern.WriteConcern {
	j := true
	return &writeconcern.WriteConcern{W: writeconcern.WCMajority, Journal: &j}
}

// Connect returns a connection, making sure the collection and its index
// exist first, and measuring the server's clock.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	client, owned := c.client, false
	if client == nil {
		var err error
		client, err = mongo.Connect(c.clientOpts)
		if err != nil {
			return nil, fmt.Errorf("mongodb: %w", err)
		}
		owned = true
	}
	cn, err := newConn(ctx, client, owned, c.cfg)
	if err != nil {
		if owned {
			client.Disconnect(context.WithoutCancel(ctx))
		}
		return nil, err
	}
	return cn, nil
}

// Driver returns the MongoDB [Driver].
func (c *Connector) Driver() driver.Driver { return Driver{} }

// String describes the connector without credentials: hosts, database and
// collection.
func (c *Connector) String() string {
	hosts := c.hosts
	if c.client == nil && hosts == "" {
		hosts = "[]"
	} else if c.client != nil {
		hosts = "(client)"
	}
	return fmt.Sprintf("mongodb(hosts=%s database=%s collection=%s)", hosts, c.cfg.Database, c.cfg.Collection)
}

// GoString is String, so that %#v does not print a password either.
func (c *Connector) GoString() string { return c.String() }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}
