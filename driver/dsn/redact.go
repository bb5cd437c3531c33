package dsn

import (
	"cmp"
	"net/url"
	"slices"
	"strings"
)

// Redact returns msg with every secret shown as xxxxx: as given, and
// percent-encoded or decoded as a URL would have it. The longest are
// replaced first, so that no part of a longer secret stays.
func Redact(msg string, secrets ...string) string {
	var forms []string
	for _, s := range secrets {
		if s == "" {
			continue
		}
		forms = append(forms, s, url.QueryEscape(s), url.PathEscape(s))
		if d, err := url.PathUnescape(s); err == nil {
			forms = append(forms, d)
		}
		if d, err := url.QueryUnescape(s); err == nil {
			forms = append(forms, d)
		}
	}
	slices.SortFunc(forms, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	for _, f := range forms {
		if f != "" {
			msg = strings.ReplaceAll(msg, f, "xxxxx")
		}
	}
	return msg
}

// URLSecrets returns what may be the password of s, a DSN shaped as
// scheme://user:password@..., for [Redact]: the text after the first ':'
// of the user information, which ends at the first '@' or at the last
// one. It is for the errors of a client library that parses s and failed.
// It parses nothing else and errs on the side of finding too much.
func URLSecrets(s string) []string {
	_, rest, ok := strings.Cut(s, "://")
	if !ok {
		return nil
	}
	var secrets []string
	for _, end := range []int{strings.IndexByte(rest, '@'), strings.LastIndexByte(rest, '@')} {
		if end < 0 {
			continue
		}
		if _, pw, ok := strings.Cut(rest[:end], ":"); ok && pw != "" {
			secrets = append(secrets, pw)
		}
	}
	return secrets
}
