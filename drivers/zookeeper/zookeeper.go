package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/go-zookeeper/zk"
)

func init() {
	lock.Register("zookeeper", Driver{})
}

// The defaults of [Config].
const (
	DefaultRoot           = "/distlock"
	DefaultSessionTimeout = lock.DefaultTTL
	DefaultRequestTimeout = 5 * time.Second
	DefaultMemberTimeout  = time.Second
	DefaultMaxSessions    = 8
)

// Driver is the ZooKeeper driver. Its zero value is ready to use;
// lock.Open uses the one registered as "zookeeper".
type Driver struct{}

var _ driver.DialerDriver = Driver{}

// OpenConnector parses dsn (see the package documentation) without
// contacting the ensemble.
func (d Driver) OpenConnector(dsn string) (driver.Connector, error) {
	return d.OpenConnectorDialer(dsn, nil)
}

// OpenConnectorDialer is OpenConnector, with every connection to a member,
// of every session, dialed by dial (nil means net.Dialer's), under the
// timeout that go-zookeeper gives a dial.
func (Driver) OpenConnectorDialer(dsn string, dial driver.DialFunc) (driver.Connector, error) {
	s, err := parseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("zookeeper: %w", err)
	}
	return &Connector{s: s, cfg: s.cfg.withDefaults(), dial: dial}, nil
}

// Config is the driver's own configuration, for [New]; a DSN sets the
// same through its chroot and parameters. Its zero value asks for the
// defaults.
type Config struct {
	// Root is the node under which keys live: a lock on "k" is the node
	// Root+"/k" (escaped), created as a container. The driver creates Root
	// and its ancestors if they are missing. Empty means [DefaultRoot].
	Root string

	// SessionTimeout is the timeout of the connection's first session,
	// which watches keys, answers Ping and Inspect, and serves the locks
	// whose TTL equals it. For [New] it must be the timeout the ensemble
	// negotiated for the connection given (the one asked of zk.Connect, if
	// the servers allow it): that session serves only locks of that TTL.
	// Zero means [DefaultSessionTimeout].
	SessionTimeout time.Duration

	// RequestTimeout bounds each operation (an acquisition, a release, ...),
	// retries over a reconnection included, and Connect, besides the
	// caller's context. A failure it ends matches driver.ErrUnavailable.
	// Zero means [DefaultRequestTimeout].
	RequestTimeout time.Duration

	// MemberTimeout is how long a member may leave requests unanswered
	// before the connection to it is given up and the session moves to the
	// next member (at most half the session timeout). It should exceed a
	// write's latency on a loaded ensemble. It applies to sessions the
	// driver opens, not to a connection given to [New]. Zero means
	// [DefaultMemberTimeout].
	MemberTimeout time.Duration

	// MaxSessions bounds the sessions of one connection: one per distinct
	// TTL in use (see the package documentation). Idle sessions are closed
	// to make room. Zero means [DefaultMaxSessions].
	MaxSessions int
}

func (c Config) withDefaults() Config {
	if c.Root == "" {
		c.Root = DefaultRoot
	}
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = DefaultSessionTimeout
	}
	c.SessionTimeout = c.SessionTimeout.Truncate(time.Millisecond)
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.MemberTimeout <= 0 {
		c.MemberTimeout = DefaultMemberTimeout
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	return c
}

// New returns a connector that uses zc, which the caller keeps and closes
// after the clients that use it. zc's session serves the locks whose TTL
// is cfg.SessionTimeout (required: the timeout the ensemble negotiated for
// zc); an acquisition with another TTL fails with an error matching
// [ErrSessionTimeout]. The driver cannot watch zc's connection for a hung
// member: the client gives one up after two thirds of the session timeout.
// Nor can it shield zc from the client's data race on reconnection (see
// the driver's DESIGN.md), which the race detector reports.
func New(zc *zk.Conn, cfg Config) (*Connector, error) {
	if zc == nil {
		return nil, errors.New("zookeeper: New: nil connection")
	}
	if cfg.SessionTimeout <= 0 {
		return nil, errors.New("zookeeper: New: Config.SessionTimeout is required: the session timeout of the connection")
	}
	if cfg.Root != "" {
		if err := validRoot(strings.TrimSuffix(cfg.Root, "/")); err != nil || !strings.HasPrefix(cfg.Root, "/") {
			return nil, fmt.Errorf("zookeeper: New: Config.Root %q must be an absolute path of valid node names", cfg.Root)
		}
		cfg.Root = strings.TrimSuffix(cfg.Root, "/")
	}
	return &Connector{zc: zc, cfg: cfg.withDefaults()}, nil
}

// Connector opens connections to one ZooKeeper ensemble. It is a
// [driver.Connector], for lock.OpenConnector, and safe for concurrent use.
type Connector struct {
	zc  *zk.Conn  // the caller's, from New; nil otherwise
	s   *settings // from a DSN
	cfg Config

	dial driver.DialFunc // dials the members; nil means net.Dialer's
}

var _ driver.Connector = (*Connector)(nil)

// Connect returns a connection. A connector opened by DSN opens its first
// session, of the DSN's session_timeout, and returns once the ensemble
// granted it (or fails after dial_timeout); it opens one more session for
// each other TTL the connection's locks use, when first used. Either way
// Connect creates the root node if it is missing, and returns within the
// request timeout.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	rctx, cancel := withTimeout(ctx, "request timeout", c.cfg.RequestTimeout)
	defer cancel()
	var base *session
	switch {
	case c.zc != nil:
		base = &session{timeout: c.cfg.SessionTimeout, zc: c.zc}
	case c.s != nil:
		dctx, cancel := withTimeout(rctx, "dial timeout", c.s.dialTimeout)
		defer cancel()
		var err error
		if base, err = c.openSession(dctx, c.cfg.SessionTimeout); err != nil {
			return nil, fmt.Errorf("zookeeper: connect: %w", mark(ctx, err))
		}
	default:
		return nil, errors.New("zookeeper: a zero Connector")
	}
	cn := newConn(c, base)
	if err := cn.ensureRoot(rctx); err != nil {
		closing.Go(func() { cn.Close() })
		return nil, fmt.Errorf("zookeeper: connect: creating %s: %w", c.cfg.Root, mark(ctx, err))
	}
	return cn, nil
}

// acl is the ACL of the nodes the driver creates: all rights to the
// digest user of the DSN, if any, and to anyone otherwise.
func (c *Connector) acl() []zk.ACL {
	if c.s != nil && c.s.username != "" {
		return zk.AuthACL(zk.PermAll)
	}
	return zk.WorldACL(zk.PermAll)
}

// String describes the connector without its password: servers, user,
// root and timeouts.
func (c *Connector) String() string {
	var b strings.Builder
	b.WriteString("zookeeper(")
	switch {
	case c.zc != nil:
		b.WriteString("conn")
	case c.s != nil:
		b.WriteString("servers=" + strings.Join(c.s.hosts, ","))
		if c.s.username != "" {
			b.WriteString(" user=" + c.s.username)
		}
	}
	fmt.Fprintf(&b, " root=%q session_timeout=%v request_timeout=%v", c.cfg.Root, c.cfg.SessionTimeout, c.cfg.RequestTimeout)
	if c.zc == nil {
		fmt.Fprintf(&b, " member_timeout=%v max_sessions=%d", c.cfg.MemberTimeout, c.cfg.MaxSessions)
	}
	b.WriteString(")")
	return b.String()
}

// GoString is String, so that %#v does not print the password either.
func (c *Connector) GoString() string { return c.String() }
