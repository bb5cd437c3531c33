package postgres

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

func init() {
	lock.Register("postgres", Driver{})
}

// Driver is the PostgreSQL driver. Its zero value is ready to use; lock.Open
// uses the one registered as "postgres".
type Driver struct{}

var _ driver.DialerDriver = Driver{}

// OpenConnector parses dsn (see the package documentation) without
// contacting the server.
func (d Driver) OpenConnector(dsn string) (driver.Connector, error) {
	return d.OpenConnectorDialer(dsn, nil)
}

// OpenConnectorDialer is OpenConnector, with every connection to the
// server dialed by dial (nil means pgx's own dialing). The pool's
// connections, the one that listens for releases and pgx's cancel
// requests all go through it, to each host of a multi-host DSN, and TLS
// runs over it. Host names reach dial unresolved.
func (Driver) OpenConnectorDialer(dsn string, dial driver.DialFunc) (driver.Connector, error) {
	s, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	if dial != nil {
		cc := s.pool.ConnConfig
		cc.DialFunc = pgconn.DialFunc(dial)
		cc.LookupFunc = func(_ context.Context, host string) ([]string, error) { return []string{host}, nil }
	}
	c, err := newConnector(nil, s.pool, s.config)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Config is the driver's own configuration, for [New]. Its zero value asks
// for the defaults.
type Config struct {
	// Table is the lease table's name: letters, digits and '_', not
	// starting with a digit, optionally qualified by a schema ("locks",
	// "app.locks"), at most 63 bytes in all. It is used as written, quoted.
	// Empty means [DefaultTable].
	Table string

	// NoCreate leaves the schema alone: the driver only checks that the
	// table exists, and never creates it.
	NoCreate bool

	// RequestTimeout bounds each call of the driver (an acquisition, a
	// release, a connection with its check of the table...), connecting
	// included, as well as the caller's context does. Zero means
	// [DefaultRequestTimeout].
	RequestTimeout time.Duration
}

// DefaultRequestTimeout is the request timeout when the DSN or [Config]
// sets none.
const DefaultRequestTimeout = 5 * time.Second

func (c Config) requestTimeout() time.Duration {
	if c.RequestTimeout <= 0 {
		return DefaultRequestTimeout
	}
	return c.RequestTimeout
}

// New returns a connector that uses pool, which the caller keeps and
// closes after the clients that use it. Every client opened on the
// connector shares the pool, and takes one connection out of it (for good)
// to listen for releases once it first waits for a key. The pool is used
// as it is configured; see the package documentation for what the driver
// sets on pools of its own.
func New(pool *pgxpool.Pool, cfg Config) (*Connector, error) {
	if pool == nil {
		return nil, fmt.Errorf("postgres: New: nil pool")
	}
	return newConnector(pool, nil, cfg)
}

// Connector opens connections to one database and lease table. It is a
// [driver.Connector], for lock.OpenConnector, and safe for concurrent use.
type Connector struct {
	pool    *pgxpool.Pool   // the caller's, from New; nil otherwise
	poolCfg *pgxpool.Config // from a DSN: each connection gets a pool of its own
	t       *table
	create  bool
	timeout time.Duration // the request timeout
}

var _ driver.Connector = (*Connector)(nil)

func newConnector(pool *pgxpool.Pool, poolCfg *pgxpool.Config, cfg Config) (*Connector, error) {
	t, err := newTable(cfg.Table)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	t.scratch = scratchTable(t.name, cfg)
	return &Connector{pool: pool, poolCfg: poolCfg, t: t, create: !cfg.NoCreate, timeout: cfg.requestTimeout()}, nil
}

// Connect returns a connection, making sure the lease table exists first.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, c.timeout, errTimedOut)
	defer cancel()
	pool, owned := c.pool, false
	var l *live
	if pool == nil {
		l = new(live)
		cfg := c.poolCfg.Copy()
		ownPool(cfg, l)
		var err error
		pool, err = pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("postgres: %w", err)
		}
		owned = true
	}
	if err := c.t.ensure(ctx, pool, c.create); err != nil {
		if owned {
			pool.Close()
		}
		return nil, failure(ctx, err, c.timeout)
	}
	return newConn(pool, owned, l, c.t, c.timeout), nil
}

// String describes the connector without its password: server (with the
// other hosts of a multi-host DSN), database, user and table.
func (c *Connector) String() string {
	var cc *pgx.ConnConfig
	switch {
	case c.pool != nil:
		cc = c.pool.Config().ConnConfig
	case c.poolCfg != nil:
		cc = c.poolCfg.ConnConfig
	}
	var table string
	if c.t != nil {
		table = c.t.name
	}
	if cc == nil { // a zero Connector
		return "postgres(table=" + table + ")"
	}
	return fmt.Sprintf("postgres(host=%s port=%d%s database=%s user=%s table=%s)",
		cc.Host, cc.Port, fallbacks(cc), cc.Database, cc.User, table)
}

// fallbacks lists the hosts that cc tries after its first, if any, as
// " fallbacks=host:port,...".
func fallbacks(cc *pgx.ConnConfig) string {
	first := net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port)))
	var addrs []string
	for _, f := range cc.Fallbacks {
		a := net.JoinHostPort(f.Host, strconv.Itoa(int(f.Port)))
		if a != first && !slices.Contains(addrs, a) { // pgx lists a host twice, with and without TLS
			addrs = append(addrs, a)
		}
	}
	if len(addrs) == 0 {
		return ""
	}
	return " fallbacks=" + strings.Join(addrs, ",")
}

// GoString is String, so that %#v does not print the password either.
func (c *Connector) GoString() string { return c.String() }

// raiseSynchronousCommit makes commits on conn wait for the WAL to be
// flushed (and, with synchronous standbys, for them), unless the server is
// already configured to wait at least that long.
func raiseSynchronousCommit(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, `SELECT set_config('synchronous_commit', 'on', false)
WHERE current_setting('synchronous_commit') IN ('off', 'local', 'remote_write')`)
	return err
}
