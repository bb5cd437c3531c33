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
