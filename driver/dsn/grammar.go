package dsn

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Grammar is one driver's DSN syntax. It is safe for concurrent use if
// nobody changes it.
type Grammar struct {
	// Scheme is what every DSN starts with, before "://".
	Scheme string

	// DefaultPort is the port of a host written without one.
	DefaultPort string

	// Path says whether a path may follow the hosts. Without it, the DSN
	// may end its hosts with a single "/" and nothing more.
	Path bool

	// Params are the parameters the DSN may have.
	Params Params
}

// DSN is a parsed DSN. Its String never shows the password.
type DSN struct {
	Scheme   string
	User     string   // decoded; "" for none
	Password string   // decoded; "" for none
	Hosts    []string // host:port, IPv6 addresses in brackets
	Path     string   // decoded, after the "/" that ends the hosts; "" for none
	Params   Values
}

// Parse parses s. Its errors start with "invalid DSN" and never quote
// the user information.
//
// The user information ends at the last '@' of the DSN, so that a '/' or
// '?' in a password never ends up in an error about the path or the
// parameters. An '@' elsewhere must be written %40.
func (g *Grammar) Parse(s string) (*DSN, error) {
	d, err := g.parse(s)
	if err != nil {
		return nil, fmt.Errorf("invalid DSN: %w", err)
	}
	return d, nil
}

func (g *Grammar) parse(s string) (*DSN, error) {
	rest, ok := strings.CutPrefix(s, g.Scheme+"://")
	if !ok {
		return nil, fmt.Errorf("it must start with %q", g.Scheme+"://")
	}
	d := &DSN{Scheme: g.Scheme}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		if err := d.setUserinfo(rest[:i]); err != nil {
			return nil, err
		}
		rest = rest[i+1:]
	}
	rest, query, _ := strings.Cut(rest, "?")
	authority, path, _ := strings.Cut(rest, "/")
	if path != "" {
		if !g.Path {
			return nil, errors.New("a path after the hosts is not allowed")
		}
		p, err := url.PathUnescape(path)
		if err != nil {
			return nil, errors.New("malformed percent-encoding in the path")
		}
		d.Path = p
	}
	hosts, err := SplitHosts(authority, g.DefaultPort)
	if err != nil {
		return nil, err
	}
	d.Hosts = hosts
	values, err := url.ParseQuery(query)
	if err != nil {
		return nil, errors.New("malformed query parameters")
	}
	if d.Params, err = g.Params.Parse(values); err != nil {
		return nil, err
	}
	return d, nil
}

// setUserinfo sets the user and password from "user[:password]", both
// percent-encoded.
func (d *DSN) setUserinfo(info string) error {
	user, pw, hasPW := strings.Cut(info, ":")
	var err error
	if d.User, err = url.PathUnescape(user); err != nil {
		return errors.New("malformed percent-encoding in the user name")
	}
	if hasPW {
		if d.Password, err = url.PathUnescape(pw); err != nil {
			return errors.New("malformed percent-encoding in the password")
		}
	}
	if d.User == "" && d.Password != "" {
		return errors.New("a password without a user name")
	}
	return nil
}

// String returns the DSN with its password shown as xxxxx.
func (d *DSN) String() string {
	var b strings.Builder
	b.WriteString(d.Scheme + "://")
	if d.User != "" {
		b.WriteString(url.PathEscape(d.User))
		if d.Password != "" {
			b.WriteString(":xxxxx")
		}
		b.WriteByte('@')
	}
	b.WriteString(strings.Join(d.Hosts, ","))
	if d.Path != "" {
		b.WriteString("/" + (&url.URL{Path: d.Path}).EscapedPath())
	}
	if q := d.Params.Encode(); q != "" {
		b.WriteString("?" + q)
	}
	return b.String()
}

// GoString is String, so that %#v shows no password either.
func (d *DSN) GoString() string { return d.String() }

// Redact returns msg with d's password, as written and decoded, shown as
// xxxxx.
func (d *DSN) Redact(msg string) string { return Redact(msg, d.Password) }
