package dsn_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock/driver/dsn"
)

var grammar = dsn.Grammar{
	Scheme:      "db",
	DefaultPort: "1234",
	Path:        true,
	Params: dsn.Params{
		{Name: "prefix", Kind: dsn.String, Default: "locks/", Doc: "The prefix of every key."},
		{Name: "name", Kind: dsn.String, Empty: true, Doc: "A name that may be empty."},
		{Name: "timeout", Kind: dsn.Duration, Default: "5s", Doc: "Bounds a call."},
		{Name: "session", Kind: dsn.Duration, Min: "1ms", Doc: "The session's length."},
		{Name: "write_timeout", Kind: dsn.Duration, Min: "0", Doc: "Bounds a write; 0 is none."},
		{Name: "tls", Kind: dsn.Bool, Doc: "Whether to use TLS."},
		{Name: "sessions", Kind: dsn.Int, Min: "1", Max: "1000", Default: "8", Doc: "Sessions at most."},
		{Name: "ca_file", Kind: dsn.File, Doc: "The CAs, in PEM."},
	},
}

func TestParse(t *testing.T) {
	d, err := grammar.Parse("db://app:p%40ss@a,b:1,[::1]:3,[fe80::1]/x/%E9%8D%B5?timeout=2s&tls=1&sessions=3&ca_file=/ca.pem&name=")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(d.Hosts, " "), "a:1234 b:1 [::1]:3 [fe80::1]:1234"; got != want {
		t.Errorf("hosts %s, want %s", got, want)
	}
	if d.User != "app" || d.Password != "p@ss" || d.Path != "x/鍵" {
		t.Errorf("user %q, password %q, path %q", d.User, d.Password, d.Path)
	}
	p := d.Params
	if p.Duration("timeout") != 2*time.Second || !p.Bool("tls") || p.Int("sessions") != 3 || p.String("ca_file") != "/ca.pem" {
		t.Errorf("values %v %v %v %v", p.Duration("timeout"), p.Bool("tls"), p.Int("sessions"), p.String("ca_file"))
	}
	if p.String("prefix") != "locks/" || p.Duration("session") != 0 || p.Has("prefix") || !p.Has("name") || p.String("name") != "" {
		t.Errorf("defaults: prefix %q, session %v, has prefix %v, name %v", p.String("prefix"), p.Duration("session"), p.Has("prefix"), p.Has("name"))
	}
	if got, want := d.String(), "db://app:xxxxx@a:1234,b:1,[::1]:3,[fe80::1]:1234/x/%E9%8D%B5?ca_file=%2Fca.pem&name=&sessions=3&timeout=2s&tls=1"; got != want {
		t.Errorf("String() = %s, want %s", got, want)
	}
}

func TestParse_bounds(t *testing.T) {
	for _, q := range []string{"session=1ms", "write_timeout=0s", "sessions=1000", "sessions=1", "timeout=1ns"} {
		if _, err := grammar.Parse("db://h?" + q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}

// Every malformed DSN is refused with an error that starts with "invalid
// DSN", says what is wrong, and does not show the password.
func TestParse_refuses(t *testing.T) {
	const pw = "s3cr3t-pw"
	for _, tc := range []struct{ dsn, want string }{
		{"", `must start with "db://"`},
		{"other://h", `must start with "db://"`},
		{"db://", "host 1: empty"},
		{"db://h,,i", "host 2: empty"},
		{"db://h:0", "port must be a number"},
		{"db://u:" + pw + "@h:x", "port must be a number"},
		{"db://h:70000", "port must be a number"},
		{"db://::1", "IPv6 addresses in brackets"},
		{"db://[::1", "IPv6 addresses in brackets"},
		{"db://u:" + pw + "@h%20x", "malformed host name"},
		{"db://:" + pw + "@h", "password without a user name"},
		{"db://u:" + pw + "%zz@h", "percent-encoding in the password"},
		{"db://u%zz:" + pw + "@h", "percent-encoding in the user name"},
		{"db://h/%zz", "percent-encoding in the path"},
		{"db://u:" + pw + "@h?nope=1", `unknown parameter "nope" (the driver knows prefix, name, timeout, session, write_timeout, tls, sessions and ca_file)`},
		{"db://u:" + pw + "?x@h?nope=1", `unknown parameter "nope"`},
		{"db://u:" + pw + "/x@h?nope=1", `unknown parameter "nope"`},
		{"db://h?timeout=1s&timeout=2s", "timeout given 2 times"},
		{"db://h?timeout=soon", "timeout must be a positive duration such as 2s or 500ms"},
		{"db://h?timeout=0s", "timeout must be a positive duration"},
		{"db://h?timeout=-1s", "timeout must be a positive duration"},
		{"db://h?session=999us", "session must be a duration such as 2s or 500ms, 1ms or more"},
		{"db://h?write_timeout=-1s", "write_timeout must be a duration such as 2s or 500ms, 0 or more"},
		{"db://h?tls=maybe", "tls must be true or false"},
		{"db://h?sessions=0", "sessions must be a number from 1 to 1000"},
		{"db://h?sessions=1001", "sessions must be a number from 1 to 1000"},
		{"db://h?sessions=many", "sessions must be a number from 1 to 1000"},
		{"db://h?prefix=", "prefix is empty"},
		{"db://h?ca_file=", "ca_file is empty"},
		{"db://h?a=%zz", "malformed query parameters"},
		{"db://h?" + strings.Repeat("n", 100) + "=1", `unknown parameter "` + strings.Repeat("n", 64) + `..."`},
	} {
		_, err := grammar.Parse(tc.dsn)
		switch {
		case err == nil:
			t.Errorf("Parse(%q) succeeded", tc.dsn)
		case !strings.HasPrefix(err.Error(), "invalid DSN: ") || !strings.Contains(err.Error(), tc.want):
			t.Errorf("Parse(%q) = %v, want an invalid DSN that says %q", tc.dsn, err, tc.want)
		case strings.Contains(err.Error(), pw):
			t.Errorf("Parse(%q) = %v: it shows the password", tc.dsn, err)
		}
	}
}

func TestParse_noPath(t *testing.T) {
	g := grammar
	g.Path = false
	for _, ok := range []string{"db://h", "db://h/", "db://h/?tls=true"} {
		if _, err := g.Parse(ok); err != nil {
			t.Errorf("Parse(%q): %v", ok, err)
		}
	}
	if _, err := g.Parse("db://h/x"); err == nil || !strings.Contains(err.Error(), "path after the hosts is not allowed") {
		t.Errorf("Parse(db://h/x) = %v, want a refused path", err)
	}
}

// Take leaves the parameters of others to them.
func TestParams_take(t *testing.T) {
	q := url.Values{"timeout": {"1s"}, "pool_size": {"3"}}
	v, err := grammar.Params.Take(q)
	if err != nil {
		t.Fatal(err)
	}
	if v.Duration("timeout") != time.Second || q.Encode() != "pool_size=3" {
		t.Errorf("timeout %v, left %q", v.Duration("timeout"), q.Encode())
	}
	if _, err := grammar.Params.Take(url.Values{"tls": {"x"}}); err == nil {
		t.Error("Take of a bad value succeeded")
	}
}

// A getter of a name the table lacks, or of another kind, is the driver's
// mistake: it panics.
func TestValues_panicsOnDriverMistakes(t *testing.T) {
	d, err := grammar.Parse("db://h")
	if err != nil {
		t.Fatal(err)
	}
	for name, get := range map[string]func(){
		"unknown":   func() { d.Params.String("nope") },
		"wrongKind": func() { d.Params.Bool("timeout") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			get()
		}()
	}
}

func TestRedact(t *testing.T) {
	for _, tc := range []struct {
		msg     string
		secrets []string
		want    string
	}{
		{"dial u:p@ss/w@h: refused", []string{"p@ss/w"}, "dial u:xxxxx@h: refused"},
		{"parse p%40ss: bad", []string{"p@ss"}, "parse xxxxx: bad"},
		{"parse p@ss: bad", []string{"p%40ss"}, "parse xxxxx: bad"},
		{"a secret-long and secret", []string{"secret", "secret-long"}, "a xxxxx and xxxxx"},
		{"nothing", []string{""}, "nothing"},
	} {
		if got := dsn.Redact(tc.msg, tc.secrets...); got != tc.want {
			t.Errorf("Redact(%q, %q) = %q, want %q", tc.msg, tc.secrets, got, tc.want)
		}
	}
	if got := fmt.Sprint(dsn.URLSecrets("x://u:pw@h/db?a=b@c")); got != "[pw pw@h/db?a=b]" {
		t.Errorf("URLSecrets = %s", got)
	}
	if got := dsn.URLSecrets("no scheme:pw@h"); got != nil {
		t.Errorf("URLSecrets without a scheme = %q", got)
	}
}

func ExampleGrammar_Parse() {
	g := dsn.Grammar{
		Scheme:      "etcd",
		DefaultPort: "2379",
		Params: dsn.Params{
			{Name: "request_timeout", Kind: dsn.Duration, Default: "5s", Doc: "Bounds each request."},
		},
	}
	d, err := g.Parse("etcd://app:s3cret@10.0.0.1,10.0.0.2:2380?request_timeout=2s")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Hosts, d.User, d.Params.Duration("request_timeout"))
	fmt.Println(d)
	_, err = g.Parse("etcd://app:s3cret@10.0.0.1?request_timeot=2s")
	fmt.Println(err)
	// Output:
	// [10.0.0.1:2379 10.0.0.2:2380] app 2s
	// etcd://app:xxxxx@10.0.0.1:2379,10.0.0.2:2380?request_timeout=2s
	// invalid DSN: unknown parameter "request_timeot" (the driver knows request_timeout)
}

func TestSplitURLs(t *testing.T) {
	ps := dsn.Params{
		{Name: "timeout", Kind: dsn.Duration, Doc: "Bounds a call."},
		{Name: "fenced", Kind: dsn.Bool, Doc: "Whether grants carry tokens."},
	}
	urls, v, err := dsn.SplitURLs("s://:pw@a:1/0?timeout=2s&db=3, t://b:2?timeout=2s&fenced=true,s://c", []string{"s", "t"}, ps)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(urls, " "), "s://:pw@a:1/0?db=3 t://b:2 s://c"; got != want {
		t.Errorf("urls %q, want %q", got, want)
	}
	if v.Duration("timeout") != 2*time.Second || !v.Bool("fenced") {
		t.Errorf("values: timeout %v, fenced %v", v.Duration("timeout"), v.Bool("fenced"))
	}
	for bad, want := range map[string]string{
		"s://a,":                          "URL 2 has the scheme",
		"x://:s3cret@a":                   `the scheme "x", want s or t`,
		"s://a,s://":                      "URL 2 names no host",
		"s://:s3cret@a:1?timeout=-1s":     "timeout",
		"s://a?fenced=1,s://b?fenced=0":   "parameter fenced is given two values",
		"s://a?fenced=1&fenced=1":         "parameter fenced is given two values",
		"s://:s3c/ret@a:bad":              "URL 1 is malformed",
		"s://:s3cret@a\x7f":               "URL 1 is malformed",
		"s://a:1,t://:s3c?ret@b:2/%zz":    "URL 2 is malformed",
		"s://a:1,\x00s3cret":              "URL 2 is malformed",
		"s://a,t://b,s://:s3cret@c:99999": "", // the client library checks ports
	} {
		_, _, err := dsn.SplitURLs(bad, []string{"s", "t"}, ps)
		switch {
		case want == "" && err != nil:
			t.Errorf("SplitURLs(%q): %v", bad, err)
		case want == "":
		case err == nil:
			t.Errorf("SplitURLs(%q) succeeded, want an error with %q", bad, want)
		case !strings.Contains(err.Error(), want):
			t.Errorf("SplitURLs(%q) = %q, want %q in it", bad, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "s3c") {
			t.Errorf("SplitURLs(%q) = %q: it quotes the password", bad, err)
		}
	}
}
