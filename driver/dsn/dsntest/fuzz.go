// Package dsntest fuzzes a driver's DSN parsing, for the drivers' fuzz
// tests.
package dsntest

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/distlock/lock/driver"
)

// Seeds are the first inputs of [Fuzz].
type Seeds struct {
	// Scheme is the scheme of the DSNs built from URLs.
	Scheme string

	// URLs are (user, password, host, path, query) tuples, put together
	// as Scheme://user:password@host/path?query.
	URLs [][5]string

	// Raw are whole DSNs, taken as they are.
	Raw []string
}

// Verbs are the fmt verbs a connector is printed with.
var Verbs = []string{"%v", "%+v", "%s", "%#v"}

// Fuzz fuzzes d's OpenConnector. It must never panic, whatever the
// string. And for a DSN built as scheme://user:password@host/path?query
// (the user information escaped as url.URL does), neither its error nor
// the connector printed with any of [Verbs] may show the password, raw
// or escaped.
//
// Besides seeds, Fuzz starts from inputs every DSN grammar must survive: a
// password with URL delimiters in it, a host list with an IPv6 address, a
// port that is not a number, an unknown parameter, and broken URLs.
func Fuzz(f *testing.F, d driver.Driver, seeds Seeds) {
	sc := seeds.Scheme
	seeds.URLs = append(seeds.URLs,
		[5]string{"app", "p@ss/w#rd?x", "h1,h2:1,[::1]:2", "/", ""},
		[5]string{"u", "long-password-123", "h:notaport", "/", ""},
		[5]string{"u", "another-secret", "h", "/", "unknown_parameter=1"},
	)
	seeds.Raw = append(seeds.Raw, sc+"://", sc+"://[::1", sc+"://:@,,?=&", sc+"://u:pw@h/%zz")
	for _, s := range seeds.URLs {
		f.Add("", s[0], s[1], s[2], s[3], s[4])
	}
	for _, raw := range seeds.Raw {
		f.Add(raw, "", "", "", "", "")
	}
	f.Fuzz(func(t *testing.T, raw, user, password, host, path, query string) {
		d.OpenConnector(raw) //nolint:errcheck // only a panic fails
		u := url.URL{Scheme: seeds.Scheme, User: url.UserPassword(user, password), Host: host, Path: path, RawQuery: query}
		dsn := u.String()
		c, err := d.OpenConnector(dsn)
		if !distinctive(password, user, host, path, query, seeds.Scheme) {
			return // it could show for other reasons: say nothing of it
		}
		if s, ok := shows(password, err, c); ok {
			t.Fatalf("OpenConnector(%q) shows the password %q: %s", dsn, password, s)
		}
	})
}

// shows returns the first text of err and c that shows password, raw or
// escaped.
func shows(password string, err error, c driver.Connector) (string, bool) {
	forms := []string{password, url.QueryEscape(password), url.PathEscape(password), (&url.URL{User: url.UserPassword("", password)}).String()[3:]}
	var texts []string
	if err != nil {
		texts = append(texts, err.Error())
	}
	if c != nil {
		for _, verb := range Verbs {
			texts = append(texts, fmt.Sprintf(verb, c))
		}
	}
	for _, s := range texts {
		for _, form := range forms {
			if strings.Contains(s, form) {
				return s, true
			}
		}
	}
	return "", false
}

// distinctive reports whether password is long enough, and absent enough
// from the rest of the DSN, that its showing can only be a leak.
func distinctive(password string, others ...string) bool {
	if len(password) < 6 {
		return false
	}
	for _, o := range others {
		if strings.Contains(o, password) || strings.Contains(url.QueryEscape(o), url.QueryEscape(password)) {
			return false
		}
	}
	return true
}

// Printed checks that d's connector for each DSN of cases prints as its
// value, and never shows secret, with any of [Verbs].
func Printed(t *testing.T, d driver.Driver, secret string, cases map[string]string) {
	t.Helper()
	for dsn, want := range cases {
		c, err := d.OpenConnector(dsn)
		if err != nil {
			t.Errorf("OpenConnector(%q): %v", dsn, err)
			continue
		}
		if got := fmt.Sprint(c); got != want {
			t.Errorf("OpenConnector(%q) = %s, want %s", dsn, got, want)
		}
		for _, verb := range Verbs {
			if s := fmt.Sprintf(verb, c); strings.Contains(s, secret) {
				t.Errorf("OpenConnector(%q) printed with %s shows the password: %s", dsn, verb, s)
			}
		}
	}
}
