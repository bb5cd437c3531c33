package zookeeper

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The DSN's parameters.
const (
	paramSessionTimeout = "session_timeout"
	paramRequestTimeout = "request_timeout"
	paramMemberTimeout  = "member_timeout"
	paramDialTimeout    = "dial_timeout"
	paramMaxSessions    = "max_sessions"
)

var knownParams = []string{paramSessionTimeout, paramRequestTimeout, paramMemberTimeout, paramDialTimeout, paramMaxSessions}

// defaultPort is ZooKeeper's client port, for hosts written without one.
const defaultPort = "2181"

// DefaultDialTimeout bounds [Connector.Connect]'s wait for a session, for
// connectors opened by DSN without dial_timeout.
const DefaultDialTimeout = 5 * time.Second

// settings is what a DSN describes.
type settings struct {
	hosts       []string // host:port, as written (IPv6 in brackets)
	username    string
	password    string
	dialTimeout time.Duration
	cfg         Config
}

// parseDSN parses zk://[user[:password]@]host[:port][,host[:port]...][/chroot][?params].
// Its errors never quote the DSN's user information.
func parseDSN(dsn string) (*settings, error) {
	rest, ok := strings.CutPrefix(dsn, "zk://")
	if !ok {
		return nil, errors.New(`invalid DSN: it must start with "zk://"`)
	}
	s := &settings{dialTimeout: DefaultDialTimeout}
	// The user information ends at the last '@' of the whole DSN, so that
	// a password with an unescaped '/' or '?' never ends up in an error
	// about the path or the parameters.
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		if err := s.setUserinfo(rest[:i]); err != nil {
			return nil, err
		}
		rest = rest[i+1:]
	}
	rest, query, _ := strings.Cut(rest, "?")
	authority, chroot, hasPath := strings.Cut(rest, "/")
	if hasPath && chroot != "" {
		root, err := url.PathUnescape(chroot)
		if err != nil {
			return nil, errors.New("invalid DSN: malformed percent-encoding in the chroot")
		}
		root = "/" + strings.TrimSuffix(root, "/")
		if err := validRoot(root); err != nil {
			return nil, fmt.Errorf("invalid DSN: chroot: %w", err)
		}
		s.cfg.Root = root
	}
	for h := range strings.SplitSeq(authority, ",") {
		hp, err := hostPort(h)
		if err != nil {
			return nil, fmt.Errorf("invalid DSN: host %d: %w", len(s.hosts)+1, err)
		}
		s.hosts = append(s.hosts, hp)
	}
	if err := s.setParams(query); err != nil {
		return nil, fmt.Errorf("invalid DSN: %w", err)
	}
	return s, nil
}

// setUserinfo sets the user name and password of the digest scheme.
func (s *settings) setUserinfo(info string) error {
	user, pw, hasPW := strings.Cut(info, ":")
	var err error
	if s.username, err = url.PathUnescape(user); err != nil {
		return errors.New("invalid DSN: malformed percent-encoding in the user name")
	}
	if hasPW {
		if s.password, err = url.PathUnescape(pw); err != nil {
			return errors.New("invalid DSN: malformed percent-encoding in the password")
		}
	}
	switch {
	case s.username == "" && s.password != "":
		return errors.New("invalid DSN: a password without a user name")
	case strings.Contains(s.username, ":"):
		return errors.New("invalid DSN: a user name with ':' (the digest scheme splits there)")
	}
	return nil
}

// validRoot checks a chroot: an absolute path of node names, none of them
// empty, "." or "..", and not under /zookeeper.
func validRoot(root string) error {
	if root == "/" {
		return errors.New("the root node itself is not allowed")
	}
	for i, name := range strings.Split(root[1:], "/") {
		switch {
		case name == "" || name == "." || name == "..":
			return fmt.Errorf("node name %q is not allowed", name)
		case i == 0 && name == "zookeeper":
			return errors.New("/zookeeper is the server's own")
		}
		for _, r := range name {
			if r < 0x20 || 0x7f <= r && r <= 0x9f || 0xd800 <= r && r <= 0xf8ff || 0xfff0 <= r {
				return errors.New("a node name holds a character ZooKeeper refuses")
			}
		}
	}
	return nil
}

// hostPort checks a host of the DSN and adds the default port if it has
// none.
func hostPort(h string) (string, error) {
	if h == "" {
		return "", errors.New("empty")
	}
	host, port, err := net.SplitHostPort(h)
	if err != nil {
		// No port: a name, an IPv4 address or a bracketed IPv6 address.
		if strings.ContainsAny(strings.Trim(h, "[]"), "[]") || strings.Count(h, ":") > 0 && !strings.HasPrefix(h, "[") {
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

// setParams applies the DSN's query parameters.
func (s *settings) setParams(query string) error {
	values, err := url.ParseQuery(query)
	if err != nil {
		return errors.New("malformed query parameters")
	}
	for name, vs := range values {
		if len(vs) != 1 {
			return fmt.Errorf("parameter %s given %d times", quoteName(name), len(vs))
		}
		if err := s.setParam(name, vs[0]); err != nil {
			return err
		}
	}
	return nil
}

func (s *settings) setParam(name, v string) error {
	var err error
	switch name {
	case paramSessionTimeout:
		s.cfg.SessionTimeout, err = positiveDuration(name, v)
		if err == nil && s.cfg.SessionTimeout < time.Millisecond {
			err = fmt.Errorf("%s must be at least 1ms", name)
		}
	case paramRequestTimeout:
		s.cfg.RequestTimeout, err = positiveDuration(name, v)
	case paramMemberTimeout:
		s.cfg.MemberTimeout, err = positiveDuration(name, v)
	case paramDialTimeout:
		s.dialTimeout, err = positiveDuration(name, v)
	case paramMaxSessions:
		n, perr := strconv.Atoi(v)
		if perr != nil || n < 1 || n > 1000 {
			return fmt.Errorf("%s must be a number from 1 to 1000", name)
		}
		s.cfg.MaxSessions = n
	default:
		return fmt.Errorf("unknown parameter %s (the driver knows %s)", quoteName(name), strings.Join(knownParams, ", "))
	}
	return err
}

func positiveDuration(name, v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s must be a positive duration such as 2s or 500ms", name)
	}
	return d, nil
}

// quoteName quotes a parameter name for an error, cut short if long.
func quoteName(s string) string {
	if len(s) > 64 {
		s = strings.ToValidUTF8(s[:64], "") + "..."
	}
	return strconv.Quote(s)
}
