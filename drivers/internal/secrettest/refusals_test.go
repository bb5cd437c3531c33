package secrettest

import (
	"errors"
	"net/url"
	"testing"
)

// Refuse fails on a variant that is accepted, on an error that shows the
// URL's password or a secret given, and on one that does not say what it
// should; and passes on the refusal it wants.
func TestRefuse(t *testing.T) {
	base := "db://user:" + Password + "@h/?tls=true"
	noTLS := []Refusal{{Name: "without TLS", Vary: func(q url.Values, _ *url.URL) { q.Del("tls") }, Want: "TLS required"}}
	for name, c := range map[string]struct {
		try  func(string) error
		fail bool
	}{
		"accepted":       {func(string) error { return nil }, true},
		"shows password": {func(u string) error { return errors.New("TLS required for " + base) }, true},
		"shows secret":   {func(string) error { return errors.New("TLS required, not other-pw") }, true},
		"says else":      {func(string) error { return errors.New("timeout") }, true},
		"refused":        {func(u string) error { return errors.New("TLS required") }, false},
	} {
		r := &recorder{TB: t}
		Refuse(r, base, c.try, noTLS, "other-pw")
		if got := len(r.failures) > 0; got != c.fail {
			t.Errorf("%s: failed %v (%q), want %v", name, got, r.failures, c.fail)
		}
	}
}
