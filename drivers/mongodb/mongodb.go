// Package mongodb is a lock driver for MongoDB and servers that speak its
// wire protocol (FerretDB among them), registered as "mongodb", over
// go.mongodb.org/mongo-driver/v2. Every acquisition inserts a grant document
// of its own whose _id encodes the key and a fence; the primary key's
// uniqueness decides who wins; expiry is judged by the server's clock;
// fencing tokens are the fences. Every request on the hot path is a find or
// an insert by _id alone.
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
//	distlock_create_collection  true (the default): create the collection if missing;
//	                            false: leave the schema alone, and only check that the collection exists
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
// j: true} and reads use read concern "majority". The DSN's own w,
// journal, wtimeoutMS and readConcernLevel options, when present, are used
// instead; with [New], [Config.WriteConcern] and [Config.ReadConcern] (nil
// means the defaults above; the client's own settings are not used, so
// that a weaker client default does not weaken the locks silently). See
// Safety for what weaker settings cost.
//
// # Documents
//
// The collection holds, for each key k, grant documents and one head
// document:
//
//	{_id: "g" + fence as 20 decimal digits + ":" + k,
//	 key: k, fence: int64, value: string, expires: date, released: bool,
//	 created: date (tombstones only)}
//	{_id: "h:" + k, fence: int64, pruned: int64}
//
// The fixed-width fence makes the _id of a grant a one-to-one encoding of
// (key, fence), so the primary key is the unique index on (key, fence): no
// other index is needed (or created). A grant with released false is an
// acquisition: its value holds the key until expires, by the server's
// clock, unless a grant with a higher fence exists. A grant with released
// true is a tombstone: Release inserts one after the holder's grant, and
// it never holds anything; its created is a lower bound of the server's
// clock when it was inserted. A key's latest grant (highest fence) says who
// holds it. The head document is only a hint of a recent fence (and of
// how far pruning got); a stale head costs probes, never safety.
//
// Why this shape: FerretDB's SQLite backend, the server these tests run
// on, hands a filter to SQLite only if it is exactly {_id: value}; every
// other query is evaluated in Go over the whole collection (24ms for one
// find over 600 grants, and many pollers saturate it). Its updates are
// read-modify-write without isolation, and each one holds two SQLite
// connections while it waits for the database's write lock: with 8
// concurrent writers, inserts ran at 447/s but insert+update pairs at
// 44/s. So acquire and release use only finds and inserts by _id.
//
// # Operations and round trips
//
//   - Acquire discovers the key's latest grant h (below), then: if grant h
//     is held (not a tombstone, and not certainly expired by the server's
//     clock), ErrHeld; otherwise it inserts grant h+1 with the caller's
//     value and expiry. A duplicate key means another acquirer took h+1
//     first: ErrHeld.
//   - Concurrent Acquires of one key on one connection take turns: one
//     that finds another in progress waits for it and returns ErrHeld if
//     that one took the key or found it held (so it is held), or tries
//     itself if that one failed otherwise. This spares FerretDB inserts
//     that would lose anyway, which queue for SQLite's write lock.
//   - Discovery starts from the latest fence the connection knows for the
//     key (it remembers the fences it inserted or saw), else from the head
//     document (one find). It finds grant h+1 by _id; while it exists, h
//     advances. Once grant h+1 is absent: if grant h, as read on the way or
//     as the connection remembers it, is held, Acquire returns ErrHeld (a
//     held grant stays held until its successor exists: Release inserts
//     one, Extend only raises expires); if grant h is a tombstone created
//     less than 5s (youngWindow) before hi(c0), Acquire inserts h+1 at once
//     (see Safety); otherwise discovery finds grant h again (or, for h =
//     0, the head: absent means a new key). For a key the connection does
//     not know, the head and grant 1 are read at once. If grant h is gone (pruned: a stale start), it starts
//     again from the head, and as a last resort from a query on the key
//     (the slow path on FerretDB). Discovery gives up after 256 probes.
//   - Release inserts grant f+1 as a tombstone after the holder's grant f
//     (the connection remembers which fence each of its values holds),
//     unless the lease may have ended by the server's clock (expires is
//     not above hi(now); so a Release in a lease's last millisecond or so
//     reports ErrNotHeld and the lease runs out instead): one insert. A
//     duplicate key means the lease had ended and another acquirer took
//     the key: ErrNotHeld.
//   - Extend raises the holder's grant's expires with $max, by _id, unless
//     the lease may have ended: one update.
//   - Release or Extend of a value the connection did not acquire (another
//     connection's) discovers the key's latest grant first and checks its
//     value.
//
// An Acquire on a key the connection knows, last released (by anyone)
// less than 5s ago, is 2 round trips (find h+1, insert h+1); with an older
// or expired grant h, 3 (find h+1, find h, insert). A Release is 1 insert.
// So an uncontended acquire and release is 3 round trips, all by _id, none
// an update. A waiter that knows the holder's grant polls with 1 find; on
// release it takes the key with 3 (find the tombstone, find the next,
// insert). A key the connection does not know costs one more round trip
// (head and grant 1 at once); a new key 3 (head and grant 1, head again,
// insert).
//
// # Safety
//
// The argument needs exactly these properties of the server: (1) an insert
// either fails with a duplicate-key error or creates the only document with
// that _id; (2) a find sees every write acknowledged before it began; (3)
// the server's clock, read by hello's localTime, advances at the rate of
// real time (within 500 ppm of the client's monotonic clock) and is not
// stepped forward; (4) with pruning on: the server executes an insert at
// most 15 seconds (serverLag) after the deadline of the attempt that sent
// it (the Go driver sends the deadline as maxTimeMS too, which FerretDB
// enforces on finds). Pruning waits 30s (pruneDelay) = 10s (insertGrace,
// each attempt's deadline) + 15s + 5s (youngWindow). Updates and deletes need no isolation: only a
// grant's holder updates it, the core runs one operation of a lock at a
// time, and deletes remove only superseded grants. That is why the driver
// works on FerretDB, whose updates, findAndModify and deletes are
// read-modify-write without isolation and which lacks $$NOW, $expr,
// pipeline updates, transactions and change streams.
//
// Server time. Each connection measures the server's clock with hello: if
// a hello sent at t0 and answered at t1 (client monotonic clock) reports
// localTime L (millisecond precision), the server's clock read at t1 lies in
// [L, L + (t1-t0) + 1ms]. At a later monotonic instant t the driver bounds
// the server's clock by lo(t) = L + (t-t1) - slack and hi(t) = L + (t-t1) +
// (t1-t0) + 1ms + slack, slack being 500 ppm of t-t1. Connecting takes one
// hello; the housekeeper then takes the best of three, and measures again
// every 30 seconds. The client's wall clock is never used, so clients'
// clocks need not agree, and need not agree with the server's.
//
// Pruning's invariants (see Housekeeping), for each key: (P1) grant f > 1
// is deleted only after grant f-1 was, so the deleted grants are always
// the lowest ones; (P2) grant f is deleted only pruneDelay (30s) after the
// insert of a grant above f was acknowledged, so pruneDelay after grant
// f+1 was inserted; (P3) the head document exists before any grant of the
// key is deleted, and is never deleted.
//
// Discovery. An attempt reads its client clock c0, then discovery ends
// with a read R1 that found grant h+1 absent, followed by a read R2 that
// found grant h present (h >= 1) or the head absent (h = 0). Then nobody
// had inserted grant h+1 before R1: otherwise it was deleted before R1;
// for h >= 1, by P1, grant h was deleted before that, yet R2 found it; for
// h = 0, by P3, the head existed before R1, yet R2 did not find it.
// (Deleted grants are never inserted again: this paragraph and the next,
// by induction over the first insert of a fence that was deleted.)
//
// Inserts. Every insert of a grant happens within insertGrace (10s) of
// its attempt's c0 (the attempt's context ends then; with (4), the server
// executes it by c0 + insertGrace + serverLag = c0 + pruneDelay -
// youngWindow). If an acquirer's insert of grant h+1
// succeeds, no other insert of h+1 came first: one after R1 would still be
// there, since by P2 it could be deleted only pruneDelay after it, after
// R1, later than the server executes ours. Grants of a key are inserted in
// fence order (h+1 only after h was found present), so when R2 read grant
// h, it was the key's latest, and the acquirer's insert succeeds only as
// its one successor. A Release's tombstone is sent only if hi(s) <
// expires at an instant s before it, so the server's clock had not reached
// expires at s, and any other insert of that fence (whose R2 saw the
// clock past expires) came after s; the tombstone's context ends at s +
// insertGrace, so with (4) the server executes it before P2 allows that
// other grant to be deleted: it too either lands first or fails.
//
// Young tombstones. An acquirer that found grant h+1 absent and knows
// grant h is a tombstone with created > hi(c0) - youngWindow inserts h+1
// without reading grant h again. If that insert succeeds, no earlier grant
// h+1 existed: deleting one needs a grant above it (P2: pruneDelay after
// that one's insert, which came after grant h's insert, itself no earlier
// than created), so it could be deleted no sooner than created +
// pruneDelay > (the server's clock at c0) + insertGrace + serverLag, later
// than the server executes ours. And grant h, a tombstone, holds nothing.
//
// Mutual exclusion. A grant taken with ttl at client instant c0 (after the
// core's clock reading start, which its validity start+ttl-drift counts
// from) gets expires = hi(c0) + ttl, which is at least the server's clock
// at start + ttl: the server's lease outlasts the core's validity. An
// acquirer treats grant h as free only if it is a tombstone (inserted by
// Release, by the holder, whose validity ended there) or if lo(c0) >=
// expires, with c0 read before R2 was sent: then R2 ran when the server's
// clock had passed expires, so the holder's validity (by real time) had
// ended before R2 ran. An extension is counted by the core only if it
// returned before the holder's validity ended, so a counted extension was
// applied before R2, and R2 saw it (2). Of two acquirers that saw the same
// grant h free, the primary key lets exactly one insert h+1 (1). So two
// holders' validities never overlap, and a key's tokens strictly increase:
// a grant with fence f+1 is only inserted by an acquirer that saw f as the
// latest, or as a tombstone (which holds nothing and is never a token).
//
// No revival. Extend refuses a lease whose expires is not above hi(now)
// when the request is sent: if the lease may have ended, nothing changes.
// A lease that ends while an extension is in flight can be extended on the
// server; the core does not count such an extension, and no acquirer that
// took the key over is affected, because it inserted a newer grant.
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
// cost of a majority round trip per read. With w:1 or a read concern
// weaker than majority, a failover can lose grants, and with them mutual
// exclusion and token order. On FerretDB (one server, SQLite) the concerns
// are accepted and every acknowledged write is visible to later reads.
//
// # Housekeeping
//
// Each connection has a background goroutine that measures the server's
// clock, forgets the leases it remembers once they have certainly ended,
// raises head documents (with $max, upserting, for every 16th fence it
// inserts: each update is expensive on FerretDB, and a head that lags is
// only a longer probe; lost updates can only leave it lower) and deletes
// superseded grants.
//
// Pruning: pruneDelay after a connection's insert of grant f (an
// acquisition or a tombstone) was acknowledged, by its monotonic clock
// stretched by the rate bound, the connection raises the key's head to at
// least f (creating it: P3), reads the head's pruned field (every grant
// below it is deleted: written only after those deletions, with $max, so
// never more than the truth) and deletes grants from there (or from where
// its own earlier deletions got) up to f-1 with one ordered delete of up
// to 256 statements by _id, which the server runs one after the other
// (P1); then it raises pruned. The latest grant is never deleted: f
// exists. A busy key is pruned at least every pruneDelay; grants left when
// a connection closes wait for the key's next acquisition. Turn pruning
// off with distlock_prune=false or [Config.NoPrune]: then assumption (4)
// is not needed, and the collection keeps one document per acquisition and
// release.
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

var _ driver.Driver = Driver{}

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
	// collection exists, and never creates anything. (It needs no index
	// but _id's.)
	NoCreate bool

	// NoPrune keeps superseded grants instead of deleting them.
	NoPrune bool

	// WriteConcern is used for every write. Nil means {w: "majority",
	// j: true}.
	WriteConcern *writeconcern.WriteConcern

	// ReadConcern is used for every read. Nil means "majority".
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

// Connect returns a connection, making sure the collection exists first,
// and measuring the server's clock.
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
