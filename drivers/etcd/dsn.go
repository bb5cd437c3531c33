package etcd

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
	paramPrefix         = "prefix"
	paramDialTimeout    = "dial_timeout"
	paramRequestTimeout = "request_timeout"
	paramMemberTimeout  = "member_timeout"
	paramTLS            = "tls"
	paramCAFile         = "ca_file"
	paramCertFile       = "cert_file"
	paramKeyFile        = "key_file"
)

var knownParams = []string{paramPrefix, paramDialTimeout, paramRequestTimeout, paramMemberTimeout,
	paramTLS, paramCAFile, paramCertFile, paramKeyFile}

// defaultPort is etcd's client port, for hosts written without one.
const defaultPort = "2379"

// DefaultDialTimeout bounds [Connector.Connect]'s wait for a member that
// answers, for connectors opened by DSN without dial_timeout.
const DefaultDialTimeout = 5 * time.Second

// settings is what a DSN describes.
type settings struct {
	hosts       []string // host:port, as written (IPv6 in brackets)
	username    string
	password    string
	tls         bool
	tlsParam    string // the tls parameter as given, if it was
	caFile      string
	certFile    string
	keyFile     string
	dialTimeout time.Duration
	cfg         Config
}

// endpoints returns the members' client URLs.
func (s *settings) endpoints() []string {
	scheme := "http://"
	if s.tls {
		scheme = "https://"
	}
	eps := make([]string, len(s.hosts))
	for i, h := range s.hosts {
		eps[i] = scheme + h
	}
	return eps
}

// parseDSN parses etcd://[user[:password]@]host[:port][,host[:port]...][/][?params].
// Its errors never quote the DSN's user information.
func parseDSN(dsn string) (*settings, error) {
	rest, ok := strings.CutPrefix(dsn, "etcd://")
	if !ok {
		return nil, errors.New(`invalid DSN: it must start with "etcd://"`)
	}
	s := &settings{dialTimeout: DefaultDialTimeout}
	authority, query, _ := strings.Cut(rest, "?")
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		if err := s.setUserinfo(authority[:i]); err != nil {
			return nil, err
		}
		authority = authority[i+1:]
	}
	authority = strings.TrimSuffix(authority, "/")
	if strings.Contains(authority, "/") {
		return nil, errors.New("invalid DSN: a path after the hosts is not allowed (use the prefix parameter)")
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

// setUserinfo sets the user and password from "user[:password]", both
// percent-encoded.
func (s *settings) setUserinfo(ui string) error {
	user, pw, hasPW := strings.Cut(ui, ":")
	var err error
	if s.username, err = url.PathUnescape(user); err != nil {
		return errors.New("invalid DSN: malformed percent-encoding in the user name")
	}
	if hasPW {
		if s.password, err = url.PathUnescape(pw); err != nil {
			return errors.New("invalid DSN: malformed percent-encoding in the password")
		}
	}
	if s.username == "" && s.password != "" {
		return errors.New("invalid DSN: a password without a user name")
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
	if host == "" || strings.ContainsAny(host, " %@?#") {
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
	if s.certFile != "" && s.keyFile == "" || s.certFile == "" && s.keyFile != "" {
		return fmt.Errorf("%s and %s go together", paramCertFile, paramKeyFile)
	}
	files := s.caFile != "" || s.certFile != ""
	if s.tlsParam != "" {
		on, err := strconv.ParseBool(s.tlsParam)
		switch {
		case err != nil:
			return fmt.Errorf("%s must be true or false", paramTLS)
		case !on && files:
			return fmt.Errorf("%s=false with TLS files", paramTLS)
		}
		s.tls = on
	}
	s.tls = s.tls || files
	return nil
}

func (s *settings) setParam(name, v string) error {
	var err error
	switch name {
	case paramPrefix:
		if v == "" {
			return fmt.Errorf("%s is empty", paramPrefix)
		}
		s.cfg.Prefix = v
	case paramDialTimeout:
		s.dialTimeout, err = positiveDuration(name, v)
	case paramRequestTimeout:
		s.cfg.RequestTimeout, err = positiveDuration(name, v)
	case paramMemberTimeout:
		s.cfg.MemberTimeout, err = positiveDuration(name, v)
	case paramTLS:
		s.tlsParam = v
		if v == "" {
			return fmt.Errorf("%s is empty", paramTLS)
		}
	case paramCAFile, paramCertFile, paramKeyFile:
		if v == "" {
			return fmt.Errorf("%s is empty", name)
		}
		*map[string]*string{paramCAFile: &s.caFile, paramCertFile: &s.certFile, paramKeyFile: &s.keyFile}[name] = v
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
