package pipenode

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/driver/dsn"
	"github.com/distlock/lock/drivers/internal/redisdial"
	"github.com/distlock/lock/drivers/internal/tlsfile"
)

// paramCAFile names, on a rediss:// URL, a PEM file of the CAs that sign
// the server's certificate, trusted instead of the system's (the clients'
// own URL syntax has no such parameter).
const paramCAFile = "ca_file"

// params are the parameters of a node's URL that the clients do not know.
var params = dsn.Params{
	{Name: paramCAFile, Kind: dsn.File, Doc: "rediss only: PEM file of the CAs that sign the server's certificate (default: the system's)."},
}

// clientDefaults are the parameters of the clients' own URL syntax that
// a DSN's URL has unless it says otherwise.
var clientDefaults = map[string]string{
	"max_retries":  "0", // one attempt per request: the algorithm decides what to retry
	"client_cache": "0", // no CLIENT TRACKING: the node reads nothing twice
}

// clientParams are the parameters of the clients' own URL syntax that a
// DSN may give, checked here (the clients ignore what they do not know)
// and left in the URL for the client.
var clientParams = dsn.Params{
	{Name: "db", Kind: dsn.Int, Min: "0", Doc: "The database number (or the URL's path)."},
	{Name: "dial_timeout", Kind: dsn.Duration, Doc: "Bounds a dial (default 5s)."},
	{Name: "write_timeout", Kind: dsn.Duration, Doc: "Closes a connection whose writes or replies stall this long (default 10s)."},
	{Name: "client_name", Kind: dsn.String, Doc: "CLIENT SETNAME on every connection."},
	{Name: "protocol", Kind: dsn.Int, Min: "2", Max: "3", Doc: "2 speaks RESP2 (default 3, RESP3)."},
	{Name: "max_retries", Kind: dsn.Int, Min: "0", Doc: "0 (the default here) retries nothing; otherwise the client retries read-only commands."},
	{Name: "client_cache", Kind: dsn.Int, Min: "0", Doc: "0 (the default here) turns client-side caching off."},
	{Name: "skip_verify", Kind: dsn.Bool, Doc: "rediss only: do not verify the server's certificate."},
}

// URL is one node's URL of a DSN, for the configure function of [NewLibrary].
type URL struct {
	// Raw is the URL without the algorithm's and the driver's own
	// parameters. It may hold a password: never quote it.
	Raw string
	// RootCAs are the CAs of ca_file, or nil for the system's.
	RootCAs *x509.CertPool
	// NetDial, if not nil, dials the node's connections instead of the
	// client's net.Dialer.
	NetDial driver.DialFunc
}

// parseURL takes the driver's own parameters out of a node's URL.
func parseURL(raw string) (URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return URL{}, errors.New("malformed URL") // never quote it: it may hold a password
	}
	q := u.Query()
	p, err := params.Take(q)
	if err != nil {
		return URL{}, err
	}
	if _, err := clientParams.Parse(maps.Clone(q)); err != nil {
		return URL{}, err
	}
	for name, value := range clientDefaults {
		if !q.Has(name) {
			q.Set(name, value)
		}
	}
	u.RawQuery = q.Encode()
	out := URL{Raw: u.String()}
	if p.Has(paramCAFile) {
		if u.Scheme != "rediss" {
			return URL{}, fmt.Errorf("parameter %s applies to rediss:// URLs only", paramCAFile)
		}
		if out.RootCAs, err = tlsfile.CertPool(p.String(paramCAFile)); err != nil {
			return URL{}, fmt.Errorf("parameter %s: %w", paramCAFile, err)
		}
	}
	return out, nil
}

// Dial is the clients' DialCtxFn for the node of u: it dials addr with
// u.NetDial, or else d, watches the connection until its first reply for a TLS mismatch (see
// redisdial.WatchFirstReply), and speaks TLS over it if cfg is not nil,
// trusting the CAs of ca_file if the URL names one.
func (u URL) Dial(ctx context.Context, addr string, d *net.Dialer, cfg *tls.Config) (net.Conn, error) {
	dial := u.NetDial
	if dial == nil {
		dial = d.DialContext
	} else if d.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.Timeout) // the client's dial_timeout, which its net.Dialer would apply
		defer cancel()
	}
	c, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	w := redisdial.WatchFirstReply(c, addr, cfg != nil, dial)
	if cfg == nil {
		return w, nil
	}
	cfg = cfg.Clone()
	if u.RootCAs != nil {
		cfg.RootCAs = u.RootCAs
	}
	if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
		cfg.ServerName, _, _ = net.SplitHostPort(addr)
	}
	tc := tls.Client(w, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return tc, nil
}
