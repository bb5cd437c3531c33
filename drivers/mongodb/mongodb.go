package mongodb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"time"

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
	DefaultDatabase       = "distlock"
	DefaultCollection     = "distlock_grants"
	DefaultRequestTimeout = 5 * time.Second
)

// Driver is the MongoDB driver. Its zero value is ready to use; lock.Open
// uses the one registered as "mongodb".
type Driver struct{}

var _ driver.DialerDriver = Driver{}

// OpenConnector parses dsn (see the package documentation) without
// contacting the server.
func (d Driver) OpenConnector(dsn string) (driver.Connector, error) {
	return d.OpenConnectorDialer(dsn, nil)
}

// OpenConnectorDialer is OpenConnector, with every connection to a server
// dialed by dial (nil means the Go driver's own dialer): the pools' and
// the monitors' connections, to every member the client discovers, and
// TLS runs over it.
func (Driver) OpenConnectorDialer(dsn string, dial driver.DialFunc) (driver.Connector, error) {
	s, err := parseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("mongodb: %w", err)
	}
	if dial != nil {
		s.client.SetDialer(dialFunc(dial))
	}
	return newConnector(nil, s.client, s.config)
}

// dialFunc is a driver.DialFunc as the Go driver's options.ContextDialer.
type dialFunc driver.DialFunc

func (d dialFunc) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return d(ctx, network, addr)
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

	// RequestTimeout bounds each call (connecting, an acquisition, a
	// release, ...) as a whole; the caller's context may end it sooner.
	// A call it ends fails with an error matching lock.ErrUnavailable.
	// Zero means [DefaultRequestTimeout].
	RequestTimeout time.Duration
}

// New returns a connector that uses client, which the caller keeps and
// disconnects after the clients that use it. Every lock.Client opened on
// the connector shares it. The driver cannot watch that client's
// heartbeats, so a server that cannot be reached shows only when a call's
// request timeout ends.
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
	if cfg.RequestTimeout < 0 {
		return nil, fmt.Errorf("mongodb: negative request timeout %v", cfg.RequestTimeout)
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
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
// and measuring the server's clock, within the request timeout. From a
// DSN, each connection has a mongo.Client of its own, whose heartbeats
// fail the calls in flight as soon as no server can be reached.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	var r *reach
	if c.client == nil {
		r = newReach(c.clientOpts.Hosts)
	}
	// Watching from before the first heartbeat, Connect learns of its failure.
	cctx, end := begin(ctx, c.cfg.RequestTimeout, r)
	defer end()
	cn, err := c.connect(cctx, r)
	if err != nil {
		return nil, fail(ctx, cctx, c.cfg.RequestTimeout, err)
	}
	return cn, nil
}

// connect is Connect, under the call's context.
func (c *Connector) connect(ctx context.Context, r *reach) (*conn, error) {
	client := c.client
	if r != nil {
		var err error
		client, err = mongo.Connect(c.clientOpts, options.Client().SetServerMonitor(r.monitor()))
		if err != nil {
			return nil, fmt.Errorf("mongodb: %w", err)
		}
	}
	cn, err := newConn(ctx, client, r, c.cfg)
	if err != nil && r != nil {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.RequestTimeout)
		defer cancel()
		client.Disconnect(dctx)
	}
	return cn, err
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
