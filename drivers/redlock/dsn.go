package redlock

import (
	"errors"
	"fmt"
	"net"
	"net/url"
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
	ParamQuorumFirst = "quorum_first" // true or false
)

// Params are the algorithm's DSN parameters.
var Params = dsn.Params{
	{Name: ParamNodeTimeout, Kind: dsn.Duration, Doc: "Bounds each request to one node (default: adaptive, see WithNodeTimeout)."},
	{Name: ParamFencing, Kind: dsn.Bool, Default: "false", Doc: "True: grants carry fencing tokens."},
	{Name: ParamKeyPrefix, Kind: dsn.String, Empty: true, Default: DefaultKeyPrefix, Doc: "Put before every key stored in Redis."},
	{Name: ParamQuorumFirst, Kind: dsn.Bool, Default: "false", Doc: "True: acquisitions ask a quorum of nodes first (see WithQuorumFirst)."},
}

// ParseDSN splits dsn, a comma-separated list of redis:// or rediss:// URLs
// (one per independent master), into the node URLs, with the algorithm's
// own parameters ([Params]) removed, and the options those parameters set.
// Its errors never repeat a URL, which may hold a password.
func ParseDSN(s string) (urls []string, opts []Option, err error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil, errors.New("redlock: empty DSN: want a comma-separated list of redis:// URLs")
	}
	urls, v, err := dsn.SplitURLs(s, []string{"redis", "rediss"}, Params)
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
	if v.Has(ParamQuorumFirst) {
		opts = append(opts, WithQuorumFirst(v.Bool(ParamQuorumFirst)))
	}
	return urls, opts, nil
}

// URLAddr returns the host:port of a node's URL, which ParseDSN has
// checked, as the Redis drivers dial it (localhost and 6379 by default).
// It names the node: it holds no password.
func URLAddr(raw string) string {
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
