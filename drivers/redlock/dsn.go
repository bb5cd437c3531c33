package redlock

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// DSN parameters that configure the algorithm rather than a node. They
// may be given on any of the DSN's URLs (once is enough; giving different
// values is an error) and are removed before the URLs reach the client.
const (
	ParamNodeTimeout = "node_timeout" // a Go duration, such as 50ms
	ParamFencing     = "fencing"      // true or false
	ParamKeyPrefix   = "key_prefix"   // any string
)

// ParseDSN splits dsn, a comma-separated list of redis:// or rediss:// URLs
// (one per independent master), into the node URLs, with the algorithm's
// own parameters removed, and the options those parameters set. Its errors
// never repeat a URL, which may hold a password.
func ParseDSN(dsn string) (urls []string, opts []Option, err error) {
	if strings.TrimSpace(dsn) == "" {
		return nil, nil, errors.New("redlock: empty DSN: want a comma-separated list of redis:// URLs")
	}
	params := make(map[string]string)
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
		for _, name := range []string{ParamNodeTimeout, ParamFencing, ParamKeyPrefix} {
			if !q.Has(name) {
				continue
			}
			v := q.Get(name)
			if old, ok := params[name]; ok && old != v {
				return nil, nil, fmt.Errorf("redlock: DSN parameter %s is given two values", name)
			}
			params[name] = v
			q.Del(name)
		}
		u.RawQuery = q.Encode()
		urls = append(urls, u.String())
	}
	if v, ok := params[ParamNodeTimeout]; ok {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, nil, fmt.Errorf("redlock: DSN parameter %s=%q: want a positive duration such as 50ms", ParamNodeTimeout, v)
		}
		opts = append(opts, WithNodeTimeout(d))
	}
	if v, ok := params[ParamFencing]; ok {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return nil, nil, fmt.Errorf("redlock: DSN parameter %s=%q: want true or false", ParamFencing, v)
		}
		opts = append(opts, WithFencing(on))
	}
	if v, ok := params[ParamKeyPrefix]; ok {
		opts = append(opts, WithKeyPrefix(v))
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
