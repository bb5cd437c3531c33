package redigo

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/driver/dsn"
	"github.com/distlock/lock/drivers/internal/redisdial"
	"github.com/distlock/lock/drivers/internal/tlsfile"
	"github.com/gomodule/redigo/redis"
)

// DSN query parameters of one URL, besides the algorithm's own (see
// redlock.ParseDSN). The names are go-redis's where they mean the same.
const (
	paramDialTimeout = "dial_timeout"
	paramSkipVerify  = "skip_verify"
	paramCAFile      = "ca_file"
)

// params are the parameters of one URL.
var params = dsn.Params{
	{Name: "client_name", Kind: dsn.String, Empty: true, Doc: "CLIENT SETNAME on every connection."},
	{Name: paramDialTimeout, Kind: dsn.Duration, Default: defaultDialTimeout.String(), Doc: "Bounds a dial: TCP, TLS, AUTH, SELECT."},
	{Name: "write_timeout", Kind: dsn.Duration, Min: "0", Doc: "Bounds each command's write (default: none)."},
	{Name: "max_idle_conns", Kind: dsn.Int, Min: "0", Doc: "Idle connections kept (default 40 per GOMAXPROCS)."},
	{Name: "max_active_conns", Kind: dsn.Int, Min: "0", Doc: "Connections open at once; 0 is no limit (the default)."},
	{Name: "idle_timeout", Kind: dsn.Duration, Min: "0", Default: defaultIdleTimeout.String(), Doc: "Idle connections older than this are closed."},
	{Name: "conn_max_lifetime", Kind: dsn.Duration, Min: "0", Doc: "Connections older than this are closed (default: never)."},
	{Name: paramSkipVerify, Kind: dsn.Bool, Doc: "rediss only: do not verify the server's certificate."},
	{Name: paramCAFile, Kind: dsn.File, Doc: "rediss only: PEM file of the CAs to verify the server's certificate with (default: the system's)."},
}

const (
	defaultDialTimeout = 5 * time.Second
	defaultIdleTimeout = 5 * time.Minute

	// idlePerProc is the default of max_idle_conns per GOMAXPROCS. A
	// Redlock round goes on once a quorum has answered, and its requests
	// to the other nodes end later, so a node serves up to about twice as
	// many requests at once as the client has operations in flight. A
	// pool that keeps fewer connections idle than it uses at once closes
	// some as they come back and dials new ones at full speed: with 10
	// per GOMAXPROCS, 16 goroutines at N=5 spent 9% of the client's CPU
	// dialing and closing (bench/README.md). Idle connections cost
	// nothing until the client needs them, and idle_timeout closes them.
	idlePerProc = 40

	// subscribeWriteTimeout bounds a SUBSCRIBE or UNSUBSCRIBE written to
	// a publish/subscribe connection whose node stopped reading, when the
	// URL sets no write_timeout.
	subscribeWriteTimeout = 5 * time.Second
)

// dbPath is the database part of a URL's path, as redigo reads it.
var dbPath = regexp.MustCompile(`^/(\d*)$`)

// endpoint is one node of the DSN: how to dial it, and its pool's
// settings. Its URL may hold a password: it goes to redigo only, never into
// an error or a name.
type endpoint struct {
	url     string
	addr    string // host:port, as redigo dials it: the node's name
	overTLS bool   // rediss://

	dialTimeout  time.Duration
	writeTimeout time.Duration
	opts         []redis.DialOption // every dial's options but the timeouts
	netDial      driver.DialFunc    // dials the TCP connections; nil means net.Dialer's

	maxIdle, maxActive int
	idleTimeout        time.Duration
	maxLifetime        time.Duration
}

// parseURL parses the i-th URL of a DSN (from redlock.ParseDSN, so its
// scheme and host have been checked) the way redis.DialURLContext will,
// so that a URL it would refuse fails here. Errors name the URL by its
// number, never by its text.
func parseURL(i int, raw string) (*endpoint, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("redigo: URL #%d of the DSN: %s", i+1, fmt.Sprintf(format, args...))
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fail("malformed") // redlock.ParseDSN parsed it already
	}
	if u.Opaque != "" {
		return nil, fail("opaque URL, want redis://host:port")
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil { // no port, as redigo assumes
		host, port = u.Host, "6379"
	}
	if host == "" {
		host = "localhost"
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return nil, fail("port %q is not a number from 0 to 65535", port)
	}
	e := &endpoint{
		url:     raw,
		addr:    net.JoinHostPort(host, port),
		overTLS: u.Scheme == "rediss",
		maxIdle: idlePerProc * runtime.GOMAXPROCS(0),
	}
	if u.Path != "" {
		m := dbPath.FindStringSubmatch(u.Path)
		if m == nil {
			return nil, fail("path %q is not a database number", u.Path)
		}
		if m[1] != "" {
			if _, err := strconv.ParseUint(m[1], 10, 31); err != nil {
				return nil, fail("database number %q is out of range", m[1])
			}
		}
	}

	p, err := params.Parse(u.Query())
	if err != nil {
		return nil, fail("%v", err)
	}
	e.dialTimeout = p.Duration(paramDialTimeout)
	e.writeTimeout = p.Duration("write_timeout")
	e.idleTimeout = p.Duration("idle_timeout")
	e.maxLifetime = p.Duration("conn_max_lifetime")
	e.maxActive = p.Int("max_active_conns")
	if p.Has("max_idle_conns") {
		e.maxIdle = p.Int("max_idle_conns")
	}
	if p.Has("client_name") {
		e.opts = append(e.opts, redis.DialClientName(p.String("client_name")))
	}
	if (p.Has(paramSkipVerify) || p.Has(paramCAFile)) && u.Scheme != "rediss" {
		return nil, fail("parameters %s and %s apply to rediss:// URLs only", paramSkipVerify, paramCAFile)
	}
	if p.Has(paramSkipVerify) {
		e.opts = append(e.opts, redis.DialTLSSkipVerify(p.Bool(paramSkipVerify)))
	}
	if p.Has(paramCAFile) {
		pool, err := tlsfile.CertPool(p.String(paramCAFile))
		if err != nil {
			return nil, fail("parameter %s: %v", paramCAFile, err)
		}
		e.opts = append(e.opts, redis.DialTLSConfig(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}))
	}
	return e, nil
}

// String describes e by its address and its pool's settings, never by
// its URL or its dial options, which may hold the password. (Value
// receivers, so that an endpoint printed by value is covered too.)
func (e endpoint) String() string {
	return fmt.Sprintf("redigo endpoint %s (dial_timeout=%v write_timeout=%v max_idle_conns=%d max_active_conns=%d idle_timeout=%v conn_max_lifetime=%v)",
		e.addr, e.dialTimeout, e.writeTimeout, e.maxIdle, e.maxActive, e.idleTimeout, e.maxLifetime)
}

// GoString is String, so that %#v shows no password either.
func (e endpoint) GoString() string { return e.String() }

// pool returns a new pool of connections to e.
func (e *endpoint) pool() *redis.Pool {
	return &redis.Pool{
		DialContext:     e.dialPooled,
		MaxIdle:         e.maxIdle,
		MaxActive:       e.maxActive,
		Wait:            e.maxActive > 0, // waits under the caller's context
		IdleTimeout:     e.idleTimeout,
		MaxConnLifetime: e.maxLifetime,
	}
}

// dialPooled dials a connection for the pool. Its replies are waited
// for under each command's context (see node.Do), not a read timeout.
func (e *endpoint) dialPooled(ctx context.Context) (redis.Conn, error) {
	return e.dial(ctx, 0, e.writeTimeout)
}

// dialSubscriber dials a publish/subscribe connection: it waits for
// messages without a read timeout, and its writes are bounded.
func (e *endpoint) dialSubscriber(ctx context.Context) (redis.Conn, error) {
	return e.dial(ctx, 0, cmp.Or(e.writeTimeout, subscribeWriteTimeout))
}

// dial connects to e under ctx and the dial timeout, whichever ends
// first; redigo's TLS handshake, which does not follow the context, gets
// the time that is left.
func (e *endpoint) dial(ctx context.Context, read, write time.Duration) (redis.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, e.dialTimeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	left := time.Until(deadline)
	if left <= 0 {
		return nil, context.DeadlineExceeded
	}
	opts := make([]redis.DialOption, 0, len(e.opts)+3)
	opts = append(opts, e.opts...)
	opts = append(opts,
		redis.DialContextFunc(e.dialTCP),
		redis.DialTLSHandshakeTimeout(left),
		redis.DialReadTimeout(read),
		redis.DialWriteTimeout(write),
	)
	c, err := redis.DialURLContext(ctx, e.url, opts...)
	if err != nil {
		return nil, e.scrub(err)
	}
	return c, nil
}

// dialTCP dials the TCP connection under a connection to e, with the
// caller's dial if the DSN came with one, and watches
// it until its first reply for a TLS mismatch (see redisdial.WatchFirstReply).
func (e *endpoint) dialTCP(ctx context.Context, network, addr string) (net.Conn, error) {
	dial := e.netDial
	if dial == nil {
		dial = (&net.Dialer{KeepAlive: 5 * time.Minute}).DialContext // redigo's default; ctx bounds the dial
	}
	c, err := dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return redisdial.WatchFirstReply(c, addr, e.overTLS, dial), nil
}

// scrub makes sure that an error does not repeat e's URL, which may hold
// a password. The URL was checked when the DSN was parsed, so redigo has
// no reason to quote it; this is a last line of defence.
func (e *endpoint) scrub(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("dial %s: malformed URL", e.addr)
	}
	if s := secret(e.url); s != "" && strings.Contains(err.Error(), s) {
		return fmt.Errorf("dial %s: failed (the error is not shown: it quotes the password)", e.addr)
	}
	return err
}

// secret returns the password of a URL, as redigo reads it: the password
// of its user information, or else its user name alone.
func secret(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return ""
	}
	if p, ok := u.User.Password(); ok {
		return p
	}
	return u.User.Username()
}
