package etcd

import (
	"fmt"
	"time"

	"github.com/distlock/lock/driver/dsn"
)

// The DSN's parameters that etcd.go reads after parsing.
const (
	paramTLS      = "tls"
	paramCAFile   = "ca_file"
	paramCertFile = "cert_file"
	paramKeyFile  = "key_file"
)

// DefaultDialTimeout bounds [Connector.Connect]'s wait for a member that
// answers, for connectors opened by DSN without dial_timeout.
const DefaultDialTimeout = 5 * time.Second

// grammar is the DSN's syntax: etcd://[user[:password]@]host[:port][,host[:port]...][/][?params].
var grammar = dsn.Grammar{
	Scheme:      "etcd",
	DefaultPort: "2379",
	Params: dsn.Params{
		{Name: "prefix", Kind: dsn.String, Default: DefaultPrefix, Doc: "Put before every key."},
		{Name: "request_timeout", Kind: dsn.Duration, Default: DefaultRequestTimeout.String(), Doc: "Bounds each operation across members, and Connect."},
		{Name: "member_timeout", Kind: dsn.Duration, Default: DefaultMemberTimeout.String(), Doc: "Bounds each attempt on one member before the next is tried."},
		{Name: "dial_timeout", Kind: dsn.Duration, Default: DefaultDialTimeout.String(), Doc: "Bounds Connect's wait for a member that answers."},
		{Name: paramTLS, Kind: dsn.Bool, Doc: "Whether to speak https to the members (the files imply it)."},
		{Name: paramCAFile, Kind: dsn.File, Doc: "PEM file of the CAs that sign the members' certificates."},
		{Name: paramCertFile, Kind: dsn.File, Doc: "The client's certificate, PEM (with key_file)."},
		{Name: paramKeyFile, Kind: dsn.File, Doc: "The client's key, PEM (with cert_file)."},
	},
}

// settings is what a DSN describes.
type settings struct {
	hosts       []string // host:port (IPv6 in brackets)
	username    string
	password    string
	tls         bool
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

// parseDSN parses a DSN of [grammar]. Its errors never quote the DSN's
// user information.
func parseDSN(s string) (*settings, error) {
	d, err := grammar.Parse(s)
	if err != nil {
		return nil, err
	}
	p := d.Params
	st := &settings{
		hosts:       d.Hosts,
		username:    d.User,
		password:    d.Password,
		caFile:      p.String(paramCAFile),
		certFile:    p.String(paramCertFile),
		keyFile:     p.String(paramKeyFile),
		dialTimeout: p.Duration("dial_timeout"),
		cfg: Config{
			Prefix:         p.String("prefix"),
			RequestTimeout: p.Duration("request_timeout"),
			MemberTimeout:  p.Duration("member_timeout"),
		},
	}
	files := st.caFile != "" || st.certFile != ""
	switch {
	case (st.certFile == "") != (st.keyFile == ""):
		return nil, fmt.Errorf("invalid DSN: %s and %s go together", paramCertFile, paramKeyFile)
	case p.Has(paramTLS) && !p.Bool(paramTLS) && files:
		return nil, fmt.Errorf("invalid DSN: %s=false with TLS files", paramTLS)
	}
	st.tls = p.Bool(paramTLS) || files
	return st, nil
}
