package redlock

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"

	"github.com/distlock/lock/driver/dsn"
)

// DSN parameters that configure the algorithm rather than a node. They
// may be given on any of the DSN's URLs (once is enough; giving different
// values is an error) and are removed before the URLs reach the client.
const (
	ParamNodeTimeout = "node_timeout" // a Go duration, such as 50ms
	ParamFencing     = "fencing"      // true or false
	ParamKeyPrefix   = "key_prefix"   // any string
)

// Params are the algorithm's DSN parameters.
var Params = dsn.Params{
	{Name: ParamNodeTimeout, Kind: dsn.Duration, Doc: "Bounds each request to one node (default: adaptive, see WithNodeTimeout)."},
	{Name: ParamFencing, Kind: dsn.Bool, Default: "false", Doc: "True: grants carry fencing tokens."},
	{Name: ParamKeyPrefix, Kind: dsn.String, Empty: true, Default: DefaultKeyPrefix, Doc: "Put before every key stored in Redis."},
}

// ParseDSN splits dsn, a comma-separated list of redis:// or rediss:// URLs
// (one per independent master), into the node URLs, with the algorithm's
// own parameters ([Params]) removed, and the options those parameters set.
// Its errors never repeat a URL, which may hold a password.
func ParseDSN(dsn string) (urls []string, opts []Option, err error) {
	if strings.TrimSpace(dsn) == "" {
		return nil, nil, errors.New("redlock: empty DSN: want a comma-separated list of redis:// URLs")
	}
	given := make(url.Values)
	for i, raw := range strings.Split(dsn, ",") {
		raw = strings.TrimSpace(raw)
		u, err := url.Parse(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("redlock: URL #%d of the DSN is malformed: %s", i+1, urlProblem(err))
		}
		if u.Scheme != "redis" && u.Scheme != "rediss" {
			return nil, nil, fmt.Errorf("redlock: URL #%d of the DSN: scheme %q, want redis or rediss", i+1, u.Scheme)
		}
		if u.Host == "" {
			return nil, nil, fmt.Errorf("redlock: URL #%d of the DSN has no host", i+1)
		}
		q := u.Query()
		for _, p := range Params {
			vs, ok := q[p.Name]
			switch {
			case !ok:
				continue
			case len(vs) > 1 || given.Has(p.Name) && given.Get(p.Name) != vs[0]:
				return nil, nil, fmt.Errorf("redlock: DSN parameter %s is given two values", p.Name)
			}
			given.Set(p.Name, vs[0])
			q.Del(p.Name)
		}
		u.RawQuery = q.Encode()
		urls = append(urls, u.String())
	}
	v, err := Params.Take(given)
	if err != nil {
		return nil, nil, fmt.Errorf("redlock: invalid DSN: %w", err)
	}
	if v.Has(ParamNodeTimeout) {
		opts = append(opts, WithNodeTimeout(v.Duration(ParamNodeTimeout)))
	}
	if v.Has(ParamFencing) {
		opts = append(opts, WithFencing(v.Bool(ParamFencing)))
	}
	if v.Has(ParamKeyPrefix) {
		opts = append(opts, WithKeyPrefix(v.String(ParamKeyPrefix)))
	}
	return urls, opts, nil
}

// quoted matches a Go-quoted string in an error message.
var quoted = regexp.MustCompile(` ?"(?:[^"\\]|\\.)*"`)

// urlProblem returns what url.Parse found wrong, without the parts of the
// URL that its message quotes: a '/', '?' or '#' in a password ends the
// host early, and the rest of the password would be quoted as a port or a
// host name, as in `invalid port ":s3cret" after host`.
func urlProblem(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return quoted.ReplaceAllString(err.Error(), "")
}

// urlAddr returns the host:port of a node's URL, which ParseDSN has
// checked, as the Redis drivers dial it.
func urlAddr(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "?"
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = "localhost"
	}
	if port == "" {
		port = "6379"
	}
	return net.JoinHostPort(host, port)
}
