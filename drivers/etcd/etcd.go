package etcd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
)

func init() {
	lock.Register("etcd", Driver{})
}

// Driver is the etcd driver. Its zero value is ready to use; lock.Open uses
// the one registered as "etcd".
type Driver struct{}

var _ driver.DialerDriver = Driver{}

// OpenConnector parses dsn (see the package documentation) without
// contacting the cluster.
func (d Driver) OpenConnector(dsn string) (driver.Connector, error) {
	return d.OpenConnectorDialer(dsn, nil)
}

// OpenConnectorDialer is OpenConnector, with every connection to a member
// dialed by dial (nil means gRPC's own dialing): those of the clients of
// each member and of the client of all members, which carries the
// watches. TLS runs over it.
func (Driver) OpenConnectorDialer(dsn string, dial driver.DialFunc) (driver.Connector, error) {
	s, err := parseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}
	c := &Connector{s: s, cfg: s.cfg.withDefaults()}
	if dial != nil {
		c.dialOptions = []grpc.DialOption{grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return dial(ctx, "tcp", addr)
		})}
	}
	return c, nil
}

// The defaults of [Config].
const (
	DefaultPrefix         = "distlock/"
	DefaultRequestTimeout = 5 * time.Second
	DefaultMemberTimeout  = time.Second
)

// Config is the driver's own configuration, for [New]; a DSN sets the
// same through its parameters. Its zero value asks for the defaults.
type Config struct {
	// Prefix is put before every key: a lock on "k" is the etcd key
	// Prefix+"k". Empty means [DefaultPrefix].
	Prefix string

	// RequestTimeout bounds each operation (an acquisition, a release, ...)
	// across all the members it tries, and Connect, besides the caller's
	// context. A failure it ends matches driver.ErrUnavailable. Zero means
	// [DefaultRequestTimeout].
	RequestTimeout time.Duration

	// MemberTimeout bounds each attempt on one member: past it, the
	// operation goes to the next member. It should exceed a write's
	// latency on a loaded cluster. Zero means [DefaultMemberTimeout].
	MemberTimeout time.Duration
}

func (c Config) withDefaults() Config {
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.MemberTimeout <= 0 {
		c.MemberTimeout = DefaultMemberTimeout
	}
	c.MemberTimeout = min(c.MemberTimeout, c.RequestTimeout)
	return c
}

// New returns a connector that uses client, which the caller keeps and
// closes after the clients that use it. Every request goes through it,
// and a request that fails on one member is tried again through it, up
// to once per endpoint, so that its balancer moves it to another member.
func New(client *clientv3.Client, cfg Config) (*Connector, error) {
	if client == nil {
		return nil, errors.New("etcd: New: nil client")
	}
	return &Connector{client: client, cfg: cfg.withDefaults()}, nil
}

// Connector opens connections to one etcd cluster. It is a
// [driver.Connector], for lock.OpenConnector, and safe for concurrent use.
type Connector struct {
	client *clientv3.Client // the caller's, from New; nil otherwise
	s      *settings        // from a DSN
	cfg    Config

	dialOptions []grpc.DialOption // the caller's dial, if any; tests add an interceptor here
}

var _ driver.Connector = (*Connector)(nil)

// Connect returns a connection. A connector opened by DSN gives it a
// client of each member (for requests) and, once it first waits, a client
// of all members (for watches); it returns once a member has answered, or
// fails after the DSN's dial_timeout or request_timeout, whichever is
// shorter.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	if c.client != nil {
		rs := c.clientRoutes()
		cli := func(context.Context) (*clientv3.Client, error) { return c.client, nil }
		return newConn(c.cfg.Prefix, rs, cli, func() error { return nil }), nil
	}
	if c.s == nil {
		return nil, errors.New("etcd: a zero Connector")
	}
	tc, err := c.s.tlsConfig()
	if err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}
	rs := c.memberRoutes(tc)
	all := &route{name: "all members", open: func() (*clientv3.Client, error) { return c.newClient(c.s.endpoints(), tc) }}
	cn := newConn(c.cfg.Prefix, rs, all.client, all.close)
	wait := min(c.s.dialTimeout, c.cfg.RequestTimeout)
	dctx, cancel := context.WithTimeoutCause(ctx, wait, fmt.Errorf("%w (%v)", errNoMember, wait))
	defer cancel()
	if err := cn.reachable(dctx); err != nil {
		cn.Close()
		return nil, wrap(ctx, "connect", err)
	}
	// Without a leader now, the first election's term starts a search.
	lctx, lcancel := context.WithTimeout(dctx, c.cfg.MemberTimeout)
	defer lcancel()
	rs.findLeader(lctx)
	return cn, nil
}

// clientRoutes is the one route through the caller's client, tried once
// per endpoint it has.
func (c *Connector) clientRoutes() *routes {
	n := max(len(c.client.Endpoints()), 1)
	r := &route{name: "the client", cli: c.client}
	all := make([]*route, n)
	for i := range all {
		all[i] = r
	}
	return newRoutes(all, false, c.cfg)
}

// memberRoutes is a route per member, the first preferred chosen at
// random so that clients spread over the members.
func (c *Connector) memberRoutes(tc *tls.Config) *routes {
	eps := c.s.endpoints()
	rs := newRoutes(make([]*route, len(eps)), true, c.cfg)
	for i, ep := range eps {
		rs.all[i] = &route{name: ep, open: func() (*clientv3.Client, error) {
			return c.newClient([]string{ep}, tc, rs.interceptor())
		}}
	}
	rs.pref.Store(int32(rand.N(len(eps))))
	return rs
}

// Keepalive of the clients' connections: a member that hangs with a watch
// stream on it is given up after about 13s, and the stream moves on.
const (
	keepAliveTime    = 10 * time.Second // gRPC's least
	keepAliveTimeout = 3 * time.Second
)

// newClient makes a client of endpoints without waiting for a connection
// (with user and password, it waits for the authentication, up to the
// member timeout or the dial timeout, whichever is shorter).
func (c *Connector) newClient(endpoints []string, tc *tls.Config, opts ...grpc.DialOption) (*clientv3.Client, error) {
	cfg := clientv3.Config{
		Endpoints:            endpoints,
		TLS:                  tc,
		Username:             c.s.username,
		Password:             c.s.password,
		DialKeepAliveTime:    keepAliveTime,
		DialKeepAliveTimeout: keepAliveTimeout,
		Logger:               zap.NewNop(),
		DialOptions:          append(opts, c.dialOptions...),
	}
	if c.s.username != "" {
		cfg.DialTimeout = min(c.cfg.MemberTimeout, c.s.dialTimeout) // bounds the authentication
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, redactErr(err, c.s.password)
	}
	return cli, nil
}

// errNoMember marks a connection that no member answered in time.
var errNoMember = errors.New("no member answered")

// reachable waits until some member answers a status request, or one
// refuses the client for good (its credentials, say).
func (cn *conn) reachable(ctx context.Context) error {
	var last error
	for {
		for _, r := range cn.routes.all {
			err := cn.routes.try(ctx, r, func(ctx context.Context, cli *clientv3.Client) error {
				_, err := cli.Status(ctx, cli.Endpoints()[0])
				return err
			})
			switch {
			case err == nil:
				return nil
			case ctx.Err() != nil:
				return fmt.Errorf("%w (last failure: %w)", context.Cause(ctx), cmpOr(last, err))
			case !transient(err):
				return err
			}
			last = err
		}
		pause(ctx, 50*time.Millisecond)
	}
}

// tlsConfig reads the DSN's TLS files, or returns nil without TLS.
func (s *settings) tlsConfig() (*tls.Config, error) {
	if !s.tls {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.caFile != "" {
		pem, err := os.ReadFile(s.caFile)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", paramCAFile, err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no PEM certificate in %s", paramCAFile, s.caFile)
		}
	}
	if s.certFile != "" {
		cert, err := tls.LoadX509KeyPair(s.certFile, s.keyFile)
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", paramCertFile, paramKeyFile, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// redactErr returns err with every occurrence of secret in its message
// replaced.
func redactErr(err error, secret string) error {
	if secret == "" || !strings.Contains(err.Error(), secret) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), secret, "xxxxx"))
}

// String describes the connector without its password: endpoints, user,
// prefix and timeouts.
func (c *Connector) String() string {
	var b strings.Builder
	b.WriteString("etcd(")
	switch {
	case c.client != nil:
		b.WriteString("client endpoints=" + strings.Join(c.client.Endpoints(), ","))
	case c.s != nil:
		b.WriteString("endpoints=" + strings.Join(c.s.endpoints(), ","))
		if c.s.username != "" {
			b.WriteString(" user=" + c.s.username)
		}
	}
	fmt.Fprintf(&b, " prefix=%q request_timeout=%v member_timeout=%v)", c.cfg.Prefix, c.cfg.RequestTimeout, c.cfg.MemberTimeout)
	return b.String()
}

// GoString is String, so that %#v does not print the password either.
func (c *Connector) GoString() string { return c.String() }
