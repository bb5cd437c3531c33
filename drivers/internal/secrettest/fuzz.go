package secrettest

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/distlock/lock/driver"
)

// FuzzDSN fuzzes d's OpenConnector with DSNs built as scheme://user:
// password@host/path?query from the fuzzer's parts (userinfo escaped as
// url.URL does): it must never panic, and neither its error nor the
// connector, printed with every verb, may show the password, raw or
// escaped. The seeds are (user, password, host, path, query) tuples.
func FuzzDSN(f *testing.F, d driver.Driver, scheme string, seeds ...[5]string) {
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2], s[3], s[4])
	}
	f.Fuzz(func(t *testing.T, user, password, host, path, query string) {
		u := url.URL{Scheme: scheme, User: url.UserPassword(user, password), Host: host, Path: path, RawQuery: query}
		dsn := u.String()
		c, err := d.OpenConnector(dsn)
		if !distinctive(password, user, host, path, query, scheme) {
			return // it could show for other reasons: say nothing of it
		}
		forms := []string{password, url.QueryEscape(password), url.PathEscape(password), (&url.URL{User: url.UserPassword("", password)}).String()[3:]}
		var shown []string
		if err != nil {
			shown = append(shown, err.Error())
		}
		if c != nil {
			for _, verb := range Verbs {
				shown = append(shown, fmt.Sprintf(verb, c))
			}
		}
		for _, s := range shown {
			for _, form := range forms {
				if strings.Contains(s, form) {
					t.Fatalf("OpenConnector(%q) shows the password %q: %s", dsn, password, s)
				}
			}
		}
	})
}

// FuzzRawDSN fuzzes d's OpenConnector with any string: it must never
// panic.
func FuzzRawDSN(f *testing.F, d driver.Driver, seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		d.OpenConnector(dsn) //nolint:errcheck // only a panic fails
	})
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
