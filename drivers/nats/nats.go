package nats

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func init() {
	lock.Register("nats", Driver{})
}

// Driver is the NATS driver. Its zero value is ready to use; lock.Open
// uses the one registered as "nats".
type Driver struct{}

var _ driver.DialerDriver = Driver{}

// OpenConnector parses dsn (see the package documentation) without
// contacting a server.
func (d Driver) OpenConnector(dsn string) (driver.Connector, error) {
	return d.OpenConnectorDialer(dsn, nil)
}

// OpenConnectorDialer is OpenConnector, with every connection to a server
// dialed by dial (nil means nats.go's own dialer): to the DSN's servers
// and to those the cluster announces, reconnections included, and to the
// monitoring URL. Each dial to a server is bounded by the DSN's dial
// timeout, and TLS runs over it.
func (Driver) OpenConnectorDialer(dsn string, dial driver.DialFunc) (driver.Connector, error) {
	s, cfg, err := parseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	cfg = cfg.withDefaults()
	cfg.dial = dial
	return &Connector{s: s, cfg: cfg}, nil
}

// customDialer is nats.CustomDialer over a driver.DialFunc: nats.go's Dial
// takes no context, so each dial gets timeout.
type customDialer struct {
	dial    driver.DialFunc
	timeout time.Duration
}

func (d customDialer) Dial(network, addr string) (net.Conn, error) {
	ctx := context.Background()
	if d.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.timeout)
		defer cancel()
	}
	return d.dial(ctx, network, addr)
}

// The defaults of [Config].
const (
	DefaultBucket         = "distlock"
	DefaultReplicas       = 3
	DefaultRequestTimeout = 10 * time.Second
	DefaultAttemptTimeout = time.Second
	DefaultDialTimeout    = 2 * time.Second
)

// Config is the driver's own configuration, for [New]; a DSN sets the
// same through its parameters. Its zero value asks for the defaults.
type Config struct {
	// Bucket is the KV bucket that holds the locks. Empty means
	// [DefaultBucket].
	Bucket string

	// Replicas is the replicas of a bucket the driver creates. A bucket
	// with fewer is used with a warning. Zero means [DefaultReplicas].
	Replicas int

	// NoCreate says never to create the bucket. Connect then fails if it
	// does not exist.
	NoCreate bool

	// RequestTimeout bounds each call, Connect included, besides the
	// caller's context. It should outlast an election of the bucket's
	// stream leader (4 to 9 seconds in NATS). A failure it ends matches
	// driver.ErrUnavailable. Zero means [DefaultRequestTimeout].
	RequestTimeout time.Duration

	// AttemptTimeout is how long a request waits for its answer before
	// the driver checks the server it is connected to, moves to another if
	// that one is silent, and sends the request again (a checked re-send:
	// see DESIGN.md). Zero means [DefaultAttemptTimeout].
	AttemptTimeout time.Duration

	// Monitor, if set, is a server's monitoring URL. Connect reads the
	// server's fsync setting there, and warns unless it is "always".
	Monitor string

	// Logger receives the warnings of Connect. Nil means slog.Default().
	Logger *slog.Logger

	// dial, if not nil, dials every connection of a connector opened by
	// DSN: to the servers and to the monitoring URL.
	dial driver.DialFunc
}

func (c Config) withDefaults() Config {
	if c.Bucket == "" {
		c.Bucket = DefaultBucket
	}
	if c.Replicas <= 0 {
		c.Replicas = DefaultReplicas
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.AttemptTimeout <= 0 {
		c.AttemptTimeout = DefaultAttemptTimeout
	}
	c.AttemptTimeout = min(c.AttemptTimeout, c.RequestTimeout)
	return c
}

func (c Config) logger() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.Default()
}

// New returns a connector that uses js, which the caller keeps and closes
// after the clients that use it. The bucket must be reachable through it.
// A connection through js never moves to another server by itself: it
// leaves that to the caller's nats.Conn.
func New(js jetstream.JetStream, cfg Config) (*Connector, error) {
	if js == nil || js.Conn() == nil {
		return nil, errors.New("nats: New: nil JetStream")
	}
	cfg = cfg.withDefaults()
	if !bucketName.MatchString(cfg.Bucket) {
		return nil, errors.New("nats: New: Config.Bucket: letters, digits, '-' and '_' only")
	}
	if cfg.Monitor != "" {
		if err := checkMonitor(cfg.Monitor); err != nil {
			return nil, fmt.Errorf("nats: New: Config.Monitor: %w", err)
		}
	}
	return &Connector{js: js, cfg: cfg}, nil
}

// Connector opens connections to one NATS system. It is a
// [driver.Connector], for lock.OpenConnector, and safe for concurrent use.
type Connector struct {
	js  jetstream.JetStream // the caller's, from New; nil otherwise
	s   *settings           // from a DSN
	cfg Config
}

var _ driver.Connector = (*Connector)(nil)

// Connect returns a connection: a nats.Conn of its own (for a connector
// opened by DSN) and the bucket, created if need be, then checked (see
// the package documentation). It fails within the request timeout.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, c.cfg.RequestTimeout, errTimedOut)
	defer cancel()
	js, own := c.js, false
	if js == nil {
		if c.s == nil {
			return nil, errors.New("nats: a zero Connector")
		}
		nc, err := c.dial(ctx)
		if err != nil {
			return nil, fail(ctx, "connect", err, c.s.secrets()...)
		}
		js, err = jetstream.New(nc)
		if err != nil {
			nc.Close()
			return nil, fail(ctx, "connect", err)
		}
		own = true
	}
	cn := newConn(js, c.cfg, own)
	if err := cn.open(ctx); err != nil {
		cn.Close()
		return nil, fail(ctx, "connect", err)
	}
	return cn, nil
}

// dial connects to the DSN's servers, within ctx: nats.Connect takes no
// context, so a connection made after ctx ended is closed in the
// background.
func (c *Connector) dial(ctx context.Context) (*nats.Conn, error) {
	opts, err := c.options()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", driver.ErrMisconfigured, err)
	}
	type result struct {
		nc  *nats.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		nc, err := opts.Connect()
		done <- result{nc, err}
	}()
	select {
	case r := <-done:
		return r.nc, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.nc != nil {
				r.nc.Close()
			}
		}()
		return nil, context.Cause(ctx)
	}
}

// Ping pongs of a connection the driver made: a server that stops
// answering is left after about three seconds, even when idle.
const (
	pingInterval = time.Second
	maxPingsOut  = 3
)

// reconnectWait is the pause between the rounds of reconnections over the
// servers.
const reconnectWait = 100 * time.Millisecond

// options are the nats.Options of the DSN. Requests are never buffered
// while reconnecting: the driver sends them again itself, checked.
func (c *Connector) options() (nats.Options, error) {
	o := nats.GetDefaultOptions()
	o.Servers = c.s.urls
	o.Name = "distlock"
	o.Timeout = c.s.dial
	o.PingInterval = pingInterval
	o.MaxPingsOut = maxPingsOut
	o.ReconnectWait = reconnectWait
	o.ReconnectJitter = reconnectWait
	o.MaxReconnect = -1
	o.ReconnectBufSize = -1
	o.AllowReconnect = true
	o.User, o.Password, o.Token = c.s.user, c.s.password, c.s.token
	o.NoCallbacksAfterClientClose = true
	if c.cfg.dial != nil {
		o.CustomDialer = customDialer{dial: c.cfg.dial, timeout: c.s.dial}
	}
	tc, err := c.s.tlsConfig()
	if err != nil {
		return o, err
	}
	if tc != nil {
		o.Secure, o.TLSConfig = true, tc
	}
	switch {
	case c.s.credsFile != "":
		if err := nats.UserCredentials(c.s.credsFile)(&o); err != nil {
			return o, fmt.Errorf("creds_file: %w", err)
		}
	case c.s.nkeyFile != "":
		if err := nkeyOption(c.s.nkeyFile, &o); err != nil {
			return o, fmt.Errorf("nkey_file: %w", err)
		}
	}
	return o, nil
}

// nkeyOption sets o to sign in with the NKey seed in file.
func nkeyOption(file string, o *nats.Options) error {
	opt, err := nats.NkeyOptionFromSeed(file)
	if err != nil {
		return err
	}
	return opt(o)
}

// String describes the connector without its password or token: servers,
// user, bucket and timeouts.
func (c *Connector) String() string {
	var b strings.Builder
	b.WriteString("nats(")
	switch {
	case c.js != nil:
		b.WriteString("client")
		if nc := c.js.Conn(); nc != nil {
			b.WriteString(" server=" + nc.ConnectedUrlRedacted())
		}
	case c.s != nil:
		b.WriteString("servers=" + strings.Join(c.s.urls, ","))
		switch {
		case c.s.user != "":
			b.WriteString(" user=" + c.s.user)
		case c.s.token != "":
			b.WriteString(" token=xxxxx")
		}
	}
	fmt.Fprintf(&b, " bucket=%s request_timeout=%v attempt_timeout=%v)", c.cfg.Bucket, c.cfg.RequestTimeout, c.cfg.AttemptTimeout)
	return b.String()
}

// GoString is String, so that %#v does not print the password either.
func (c *Connector) GoString() string { return c.String() }
