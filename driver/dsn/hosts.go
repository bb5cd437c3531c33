package dsn

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// SplitHosts splits a comma-separated list of host[:port], IPv6 addresses
// in brackets, and gives a host without a port defaultPort. It returns the
// hosts as host:port. Its errors name a host by its number, not its text.
func SplitHosts(list, defaultPort string) ([]string, error) {
	var hosts []string
	for h := range strings.SplitSeq(list, ",") {
		hp, err := hostPort(h, defaultPort)
		if err != nil {
			return nil, fmt.Errorf("host %d: %w", len(hosts)+1, err)
		}
		hosts = append(hosts, hp)
	}
	return hosts, nil
}

// hostPort checks one host and adds defaultPort if it has none.
func hostPort(h, defaultPort string) (string, error) {
	if h == "" {
		return "", errors.New("empty")
	}
	host, port, err := net.SplitHostPort(h)
	if err != nil {
		// No port: a name, an IPv4 address or a bracketed IPv6 address.
		bracketed := strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]")
		if strings.ContainsAny(strings.Trim(h, "[]"), "[]") || strings.Contains(h, ":") && !bracketed {
			return "", errors.New("malformed host (write IPv6 addresses in brackets)")
		}
		host, port = strings.Trim(h, "[]"), defaultPort
	}
	if host == "" || strings.ContainsAny(host, " %@?#/") {
		return "", errors.New("malformed host name")
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return "", errors.New("the port must be a number from 1 to 65535")
	}
	return net.JoinHostPort(host, port), nil
}
