package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/go-sql-driver/mysql"
)

func init() {
	lock.Register("mysql", Driver{})
}

// Driver is the MySQL and MariaDB driver. Its zero value is ready to use;
// lock.Open uses the one registered as "mysql".
type Driver struct{}

var _ driver.DialerDriver = Driver{}

// OpenConnector parses dsn (see the package documentation) without
// contacting the server.
func (d Driver) OpenConnector(dsn string) (driver.Connector, error) {
	return d.OpenConnectorDialer(dsn, nil)
}

// OpenConnectorDialer is OpenConnector, with every connection dialed by
// dial (nil means go-sql-driver's own dialing).
func (Driver) OpenConnectorDialer(dsn string, dial driver.DialFunc) (driver.Connector, error) {
	mc, cfg, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	if dial != nil {
		mc.DialFunc = dial
	}
	return newConnector(nil, mc, cfg)
}

// Config is the driver's own configuration, for [New]. Its zero value asks
// for the defaults.
type Config struct {
	// Table is the lease table's name, in the pool's database: letters,
	// digits and '_', not starting with a digit, at most 64 bytes. Empty
	// means [DefaultTable].
	Table string

	// NoCreate leaves the schema alone: the driver only checks that the
	// table exists, and never creates it or widens its value column.
	NoCreate bool

	// RequestTimeout bounds each call of the driver, connecting included,
	// as well as the caller's context does. Zero means
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

// Settings of the pools the driver opens from a DSN: idle connections are
// kept for the next calls, rather than database/sql's default of two.
const (
	poolMaxIdle     = 16
	poolMaxIdleTime = time.Minute
)

// New returns a connector that uses db, a pool of go-sql-driver/mysql
// connections (or of any driver for a server of the MySQL protocol) that
// the caller keeps and closes after the clients that use it. Every client
// opened on the connector shares the pool and its prepared statements.
// The pool is used as it is configured. The driver's statements depend on
// none of go-sql-driver's flags (clientFoundRows, parseTime, loc) nor on
// the session's time zone. Connect refuses a pool whose sessions have no
// database or have autocommit off.
func New(db *sql.DB, cfg Config) (*Connector, error) {
	if db == nil {
		return nil, fmt.Errorf("mysql: New: nil pool")
	}
	return newConnector(db, nil, cfg)
}

// Connector opens connections to one database and lease table. It is a
// [driver.Connector], for lock.OpenConnector, and safe for concurrent use.
type Connector struct {
	db      *sql.DB       // the caller's, from New; nil otherwise
	mc      *mysql.Config // from a DSN: each connection gets a pool of its own
	t       *table
	create  bool
	timeout time.Duration // the request timeout

	mu     sync.Mutex
	shared *statements // prepared on db, once, for every connection
}

var _ driver.Connector = (*Connector)(nil)

func newConnector(db *sql.DB, mc *mysql.Config, cfg Config) (*Connector, error) {
	t, err := newTable(cfg.Table)
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	t.scratch = scratchTable(t.name, cfg)
	return &Connector{db: db, mc: mc, t: t, create: !cfg.NoCreate, timeout: cfg.requestTimeout()}, nil
}

// Connect returns a connection, making sure the lease table exists and
// preparing the statements first.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, c.timeout, errTimedOut)
	defer cancel()
	if c.db != nil {
		st, err := c.sharedStatements(ctx)
		if err != nil {
			return nil, failure(ctx, err, c.timeout)
		}
		return newConn(c.db, false, st, c.t, c.timeout), nil
	}
	mcfg, socks := c.poolConfig()
	mc, err := mysql.NewConnector(mcfg)
	if err != nil {
		return nil, wrap(err)
	}
	db := sql.OpenDB(mc)
	db.SetMaxIdleConns(poolMaxIdle)
	db.SetConnMaxIdleTime(poolMaxIdleTime)
	st, err := c.prepare(ctx, db)
	if err != nil {
		closeDB(db)
		return nil, failure(ctx, err, c.timeout)
	}
	cn := newConn(db, true, st, c.t, c.timeout)
	cn.sockets = socks
	return cn, nil
}

// poolConfig returns the configuration of a new pool from the DSN, and
// its sockets if the driver dials them. It does for the standard networks
// (tcp, tcp4, tcp6, unix) and through a dial of the caller's, but not for
// a network name registered with mysql.RegisterDialContext, which only
// go-sql-driver can dial. A pool with sockets has read and write
// deadlines of the request timeout at most, and its calls under a context
// that cannot end skip go-sql-driver's context watcher (see [sockets]).
func (c *Connector) poolConfig() (*mysql.Config, *sockets) {
	mc := c.mc.Clone()
	// go-sql-driver would log a broken connection to the standard error
	// once per call, beside the error the call returns: on a hung server,
	// a line per attempt. The call's error says it all.
	mc.Logger = &mysql.NopLogger{}
	switch mc.Net {
	case "tcp", "tcp4", "tcp6", "unix":
	default:
		if mc.DialFunc == nil {
			return mc, nil
		}
	}
	socks := newSockets(mc.DialFunc)
	mc.DialFunc = socks.dialContext
	if mc.ReadTimeout <= 0 || mc.ReadTimeout > c.timeout {
		mc.ReadTimeout = c.timeout
	}
	if mc.WriteTimeout <= 0 || mc.WriteTimeout > c.timeout {
		mc.WriteTimeout = c.timeout
	}
	return mc, socks
}

// sharedStatements returns the statements prepared on the caller's pool,
// preparing them at the first call that succeeds.
func (c *Connector) sharedStatements(ctx context.Context) (*statements, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shared != nil {
		return c.shared, nil
	}
	st, err := c.prepare(ctx, c.db)
	if err != nil {
		return nil, err
	}
	c.shared = st
	return st, nil
}

// prepare makes sure of the table on db and prepares the statements.
func (c *Connector) prepare(ctx context.Context, db *sql.DB) (*statements, error) {
	col, err := c.t.ensure(ctx, db, c.create)
	if err != nil {
		return nil, err
	}
	st, err := prepareStatements(ctx, db, c.t)
	if err != nil {
		return nil, err
	}
	st.value = col
	return st, nil
}

// String describes the connector without its password: network, address,
// database, user and table.
func (c *Connector) String() string {
	var table string
	if c.t != nil {
		table = c.t.name
	}
	switch {
	case c.mc != nil:
		return fmt.Sprintf("mysql(%s(%s) database=%s user=%s table=%s)", c.mc.Net, c.mc.Addr, c.mc.DBName, c.mc.User, table)
	case c.db != nil:
		return "mysql(pool table=" + table + ")"
	}
	return "mysql(table=" + table + ")"
}

// GoString is String, so that %#v does not print the password either.
func (c *Connector) GoString() string { return c.String() }
