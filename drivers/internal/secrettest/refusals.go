package secrettest

import (
	"net/url"
	"strings"
	"testing"
)

// Refusal is a variant of a URL that works, which the server must refuse.
type Refusal struct {
	Name string
	Vary func(q url.Values, u *url.URL) // changes a copy of the URL, and of its query
	Want string                         // what the error must say
}

// Refuse calls try with each variant of base and fails t unless every one
// fails with an error that says its Want and shows neither base's password
// nor any of secrets (a wrong password the variant put in, say).
func Refuse(t testing.TB, base string, try func(url string) error, cases []Refusal, secrets ...string) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	if pw, ok := u.User.Password(); ok {
		secrets = append(secrets, pw)
	}
	for _, c := range cases {
		v := *u
		q := v.Query()
		c.Vary(q, &v)
		v.RawQuery = q.Encode()
		err := try(v.String())
		switch {
		case err == nil:
			t.Errorf("%s: the connection was accepted", c.Name)
		case containsAny(err.Error(), secrets):
			t.Errorf("%s: the error shows a password: %v", c.Name, err)
		case !strings.Contains(err.Error(), c.Want):
			t.Errorf("%s: %v, want an error about %q", c.Name, err, c.Want)
		}
	}
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if sub != "" && strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
