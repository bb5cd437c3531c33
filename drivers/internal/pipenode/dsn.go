package pipenode

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/driver/dsn"
	"github.com/distlock/lock/drivers/internal/redisdial"
	"github.com/distlock/lock/drivers/internal/tlsfile"
	"github.com/distlock/lock/drivers/redlock"
)

// paramCAFile names, on a rediss:// URL, a PEM file of the CAs that sign
// the server's certificate, trusted instead of the system's (the clients'
// own URL syntax has no such parameter).
const paramCAFile = "ca_file"

// params are the parameters of a node's URL that the clients do not know.
var params = dsn.Params{
	{Name: paramCAFile, Kind: dsn.File, Doc: "rediss only: PEM file of the CAs that sign the server's certificate (default: the system's)."},
}

// URL is one node's URL of a DSN, for the client's ParseURL.
type URL struct {
	// Raw is the URL without the algorithm's and the driver's own
	// parameters. It may hold a password: never quote it.
	Raw string
	// RootCAs are the CAs of ca_file, or nil for the system's.
	RootCAs *x509.CertPool
}

// Opener turns a node's URL into a function that opens a client for it.
// It parses the URL at once, so that a malformed one fails the DSN, and
// opens nothing.
type Opener func(u URL) (open func() (Client, error), err error)

// OpenConnector returns the connector of a DSN of the driver registered
// as name: redis:// and rediss:// URLs, one per node, with the
// algorithm's parameters (redlock.ParseDSN) and ca_file. Its nodes open
// their clients at their first request.
func OpenConnector(name, s string, opener Opener) (driver.Connector, error) {
	return redlock.NewDSNConnector(s, func(i int, raw string) (func() redlock.Node, error) {
		open, err := parseURL(raw, opener)
		if err != nil {
			return nil, fmt.Errorf("%s: URL #%d of the DSN: %w", name, i+1, err)
		}
		addr := redlock.URLAddr(raw)
		return func() redlock.Node { return Lazy(open, addr) }, nil
	})
}

func parseURL(raw string, opener Opener) (func() (Client, error), error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("malformed URL") // never quote it: it may hold a password
	}
	q := u.Query()
	p, err := params.Take(q)
	if err != nil {
		return nil, err
	}
	u.RawQuery = q.Encode()
	out := URL{Raw: u.String()}
	if p.Has(paramCAFile) {
		if u.Scheme != "rediss" {
			return nil, fmt.Errorf("parameter %s applies to rediss:// URLs only", paramCAFile)
		}
		if out.RootCAs, err = tlsfile.CertPool(p.String(paramCAFile)); err != nil {
			return nil, fmt.Errorf("parameter %s: %w", paramCAFile, err)
		}
	}
	return opener(out)
}

// Dial is the clients' DialCtxFn for the nodes of a DSN: it dials addr
// with d, watches the connection until its first reply for a TLS mismatch
// (see redisdial.WatchFirstReply), and speaks TLS over it if cfg is not
// nil.
func Dial(ctx context.Context, addr string, d *net.Dialer, cfg *tls.Config) (net.Conn, error) {
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	w := redisdial.WatchFirstReply(c, addr, cfg != nil)
	if cfg == nil {
		return w, nil
	}
	if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
		cfg = cfg.Clone()
		cfg.ServerName, _, _ = net.SplitHostPort(addr)
	}
	tc := tls.Client(w, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return tc, nil
}
