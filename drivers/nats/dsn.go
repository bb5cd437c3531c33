package nats

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/distlock/lock/driver/dsn"
)

// grammar is the DSN's syntax: nats://[user[:password]@]host[:port],...
var grammar = dsn.Grammar{
	Scheme:      "nats",
	DefaultPort: "4222",
	Params: dsn.Params{
		{Name: "bucket", Kind: dsn.String, Default: DefaultBucket, Doc: "The KV bucket of the locks."},
		{Name: "replicas", Kind: dsn.Int, Min: "1", Max: "5", Default: "3", Doc: "The replicas of a bucket the driver creates, and the fewest it accepts without a warning."},
		{Name: "create", Kind: dsn.Bool, Default: "true", Doc: "False: never create the bucket, only check it."},
		{Name: "request_timeout", Kind: dsn.Duration, Default: DefaultRequestTimeout.String(), Doc: "Bounds each call, connecting included."},
		{Name: "attempt_timeout", Kind: dsn.Duration, Default: DefaultAttemptTimeout.String(), Doc: "Past it without an answer, the server is checked, left if silent, and the request sent again."},
		{Name: "dial_timeout", Kind: dsn.Duration, Default: DefaultDialTimeout.String(), Doc: "Bounds the connection to each server, its handshake included."},
		{Name: "tls", Kind: dsn.Bool, Doc: "True: TLS to the servers (implied by the files below)."},
		{Name: "ca_file", Kind: dsn.File, Doc: "PEM file of the CAs that sign the servers' certificates."},
		{Name: "cert_file", Kind: dsn.File, Doc: "The client's certificate, PEM."},
		{Name: "key_file", Kind: dsn.File, Doc: "The client's key, PEM."},
		{Name: "creds_file", Kind: dsn.File, Doc: "A NATS credentials file (a user JWT and its NKey seed)."},
		{Name: "nkey_file", Kind: dsn.File, Doc: "A file with an NKey seed."},
		{Name: "monitor", Kind: dsn.String, Doc: "A server's monitoring URL (http://host:8222): Connect checks its fsync setting there."},
	},
}

// dsnForm is the DSN's shape, for errors.
const dsnForm = "nats://[user:password@]host:4222,host:4222?bucket=locks"

// settings are what a DSN says besides Config.
type settings struct {
	urls      []string // nats://host:port, without credentials
	user      string
	password  string
	token     string // a user name without a password, as nats.go reads URLs
	tls       bool
	caFile    string
	certFile  string
	keyFile   string
	credsFile string
	nkeyFile  string
	dial      time.Duration
}

// bucketName is what NATS accepts as a bucket's name.
var bucketName = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// parseDSN parses s. Its errors never quote the password.
func parseDSN(s string) (*settings, Config, error) {
	if strings.TrimSpace(s) == "" {
		return nil, Config{}, fmt.Errorf("invalid DSN: it is empty: write %s", dsnForm)
	}
	d, err := grammar.Parse(s)
	if err != nil {
		return nil, Config{}, err
	}
	p := d.Params
	cfg := Config{
		Bucket:         p.String("bucket"),
		Replicas:       p.Int("replicas"),
		NoCreate:       !p.Bool("create"),
		RequestTimeout: p.Duration("request_timeout"),
		AttemptTimeout: p.Duration("attempt_timeout"),
		Monitor:        p.String("monitor"),
	}
	if !bucketName.MatchString(cfg.Bucket) || len(cfg.Bucket) > 64 {
		return nil, Config{}, errors.New("invalid DSN: bucket: letters, digits, '-' and '_' only, at most 64")
	}
	if cfg.Monitor != "" {
		if err := checkMonitor(cfg.Monitor); err != nil {
			return nil, Config{}, fmt.Errorf("invalid DSN: monitor: %w", err)
		}
	}
	st := &settings{
		tls:       p.Bool("tls"),
		caFile:    p.String("ca_file"),
		certFile:  p.String("cert_file"),
		keyFile:   p.String("key_file"),
		credsFile: p.String("creds_file"),
		nkeyFile:  p.String("nkey_file"),
		dial:      p.Duration("dial_timeout"),
	}
	if (st.certFile == "") != (st.keyFile == "") {
		return nil, Config{}, errors.New("invalid DSN: cert_file and key_file go together")
	}
	st.tls = st.tls || st.caFile != "" || st.certFile != ""
	switch {
	case d.Password != "":
		st.user, st.password = d.User, d.Password
	case d.User != "":
		st.token = d.User
	}
	if (st.user != "" || st.token != "") && (st.credsFile != "" || st.nkeyFile != "") {
		return nil, Config{}, errors.New("invalid DSN: credentials in the URL and in creds_file or nkey_file: give one")
	}
	if st.credsFile != "" && st.nkeyFile != "" {
		return nil, Config{}, errors.New("invalid DSN: creds_file and nkey_file: give one")
	}
	for _, h := range d.Hosts {
		st.urls = append(st.urls, "nats://"+h)
	}
	return st, cfg, nil
}

// checkMonitor checks that u is an http(s) URL of a host, without a path
// beyond "/".
func checkMonitor(u string) error {
	mu, err := url.Parse(u)
	switch {
	case err != nil:
		return errors.New("malformed URL")
	case mu.Scheme != "http" && mu.Scheme != "https":
		return errors.New("want an http:// or https:// URL")
	case mu.Host == "":
		return errors.New("it names no host")
	case mu.User != nil:
		return errors.New("the monitoring endpoint takes no credentials")
	case mu.Path != "" && mu.Path != "/":
		return errors.New("want the server's URL, without a path")
	}
	return nil
}

// tlsConfig reads the DSN's TLS files, or returns nil without TLS.
func (s *settings) tlsConfig() (*tls.Config, error) {
	if !s.tls {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.caFile != "" {
		pem, err := os.ReadFile(s.caFile)
		if err != nil {
			return nil, fmt.Errorf("ca_file: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ca_file: no PEM certificate in %s", s.caFile)
		}
	}
	if s.certFile != "" {
		cert, err := tls.LoadX509KeyPair(s.certFile, s.keyFile)
		if err != nil {
			return nil, fmt.Errorf("cert_file, key_file: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// secrets are the texts no error may show.
func (s *settings) secrets() []string { return []string{s.password, s.token} }
