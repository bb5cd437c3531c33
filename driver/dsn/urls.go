package dsn

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// SplitURLs splits list, a comma-separated list of URLs, one per server,
// for a driver whose client library parses each server's URL itself (a
// Redlock DSN is one redis:// URL per node, say). Each URL must have one
// of schemes and name a host.
//
// It takes the table's parameters out of every URL, since they configure
// the driver rather than one server. Any URL may give one; two URLs that
// give it different values are an error. It returns the URLs without
// them, for the client library, and the parameters' values.
//
// Its errors name a URL by its number and quote no part of it, which may
// hold a password.
func SplitURLs(list string, schemes []string, ps Params) ([]string, Values, error) {
	var urls []string
	given := make(url.Values)
	for raw := range strings.SplitSeq(list, ",") {
		n := len(urls) + 1
		u, err := url.Parse(strings.TrimSpace(raw))
		switch {
		case err != nil:
			return nil, Values{}, fmt.Errorf("URL %d is malformed: %s", n, urlProblem(err))
		case !slices.Contains(schemes, u.Scheme):
			return nil, Values{}, fmt.Errorf("URL %d has the scheme %s, want %s", n, quoteName(u.Scheme), strings.Join(schemes, " or "))
		case u.Host == "":
			return nil, Values{}, fmt.Errorf("URL %d names no host", n)
		}
		q := u.Query()
		for _, p := range ps {
			vs, ok := q[p.Name]
			if !ok {
				continue
			}
			if len(vs) > 1 || given.Has(p.Name) && given.Get(p.Name) != vs[0] {
				return nil, Values{}, fmt.Errorf("parameter %s is given two values", p.Name)
			}
			given.Set(p.Name, vs[0])
			q.Del(p.Name)
		}
		u.RawQuery = q.Encode()
		urls = append(urls, u.String())
	}
	v, err := ps.Take(given)
	if err != nil {
		return nil, Values{}, err
	}
	return urls, v, nil
}

// quoted matches a Go-quoted string in an error message.
var quoted = regexp.MustCompile(` ?"(?:[^"\\]|\\.)*"`)

// urlProblem returns what url.Parse found wrong, without the parts of the
// URL that its message quotes. A '/', '?' or '#' in a password ends the
// host early, and the rest of the password would be quoted as a port or a
// host name, as in `invalid port ":s3cret" after host`.
func urlProblem(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return quoted.ReplaceAllString(err.Error(), "")
}
