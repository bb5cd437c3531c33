package mysql

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/distlock/lock/driver/dsn"
	"github.com/go-sql-driver/mysql"
)

// paramPrefix starts the name of every parameter of the driver's own. The
// driver takes them out of the DSN before go-sql-driver parses it, which
// would send them to the server as system variables. An unknown one is an
// error.
const paramPrefix = "distlock_"

// params are the driver's own parameters.
var params = dsn.Params{
	{Name: "distlock_table", Kind: dsn.String, Default: DefaultTable, Doc: "The lease table, in the DSN's database."},
	{Name: "distlock_create_table", Kind: dsn.Bool, Default: "true", Doc: "False: never create or alter the table, only check that it exists."},
	{Name: "distlock_request_timeout", Kind: dsn.Duration, Default: DefaultRequestTimeout.String(), Doc: "Bounds each call, connecting included."},
}

// dsnForm is the DSN's shape, for the errors that say how to write it.
const dsnForm = "user:password@tcp(host:3306)/dbname"

// parseDSN parses a DSN for [Driver.OpenConnector]: the driver takes its
// own parameters out, checks that the DSN names its server and database,
// and go-sql-driver's ParseDSN reads the rest. Its errors quote neither
// the DSN nor its password.
func parseDSN(s string) (*mysql.Config, Config, error) {
	if strings.TrimSpace(s) == "" {
		return nil, Config{}, fmt.Errorf("invalid DSN: it is empty: write %s", dsnForm)
	}
	rest, ours, err := takeParams(s)
	if err != nil {
		return nil, Config{}, fmt.Errorf("invalid DSN: %w", err)
	}
	values, err := params.Parse(ours)
	if err != nil {
		return nil, Config{}, fmt.Errorf("invalid DSN: %w", err)
	}
	cfg := Config{
		Table:          values.String("distlock_table"),
		NoCreate:       !values.Bool("distlock_create_table"),
		RequestTimeout: values.Duration("distlock_request_timeout"),
	}
	if _, err := newTable(cfg.Table); err != nil {
		return nil, Config{}, fmt.Errorf("invalid DSN: distlock_table: %w", err)
	}
	if err := namesServer(rest); err != nil {
		return nil, Config{}, fmt.Errorf("invalid DSN: %w: write %s", err, dsnForm)
	}
	mc, err := mysql.ParseDSN(rest)
	if err != nil {
		return nil, Config{}, errors.New("invalid DSN: " + parseProblem(err, s))
	}
	if mc.DBName == "" {
		return nil, Config{}, fmt.Errorf("invalid DSN: it names no database: write %s", dsnForm)
	}
	if v, ok := mc.Params["autocommit"]; ok && !truthy(v) {
		return nil, Config{}, errors.New("invalid DSN: autocommit must stay on: the driver's statements commit one by one")
	}
	if mc.Timeout == 0 {
		// Connections are dialed under the caller's context too. This
		// bounds a dial that database/sql makes in the background.
		mc.Timeout = cfg.requestTimeout()
	}
	return mc, cfg, nil
}

// truthy reports whether a system variable's value from a DSN turns it on.
func truthy(v string) bool {
	switch strings.ToLower(strings.Trim(v, `'"`)) {
	case "0", "off", "false":
		return false
	}
	return true
}

// takeParams returns the DSN s without the driver's parameters, and those
// parameters. It finds the query as go-sql-driver does: after the first
// '?' that follows the last '/'.
func takeParams(s string) (rest string, ours url.Values, err error) {
	ours = make(url.Values)
	slash := strings.LastIndexByte(s, '/')
	if slash < 0 {
		return s, ours, nil
	}
	q := strings.IndexByte(s[slash:], '?')
	if q < 0 {
		return s, ours, nil
	}
	head, query := s[:slash+q], s[slash+q+1:]
	var kept []string
	for part := range strings.SplitSeq(query, "&") {
		name, value, _ := strings.Cut(part, "=")
		if !strings.HasPrefix(name, paramPrefix) {
			kept = append(kept, part)
			continue
		}
		v, err := url.QueryUnescape(value)
		if err != nil {
			return "", nil, errors.New("malformed percent-encoding in parameter " + name)
		}
		ours.Add(name, v)
	}
	if len(kept) == 0 {
		return head, ours, nil
	}
	return head + "?" + strings.Join(kept, "&"), ours, nil
}

// namesServer checks that the DSN s writes its server as net(address)
// before the database, with a host for a TCP address. Else go-sql-driver
// would connect to 127.0.0.1:3306, which may be another server.
func namesServer(s string) error {
	slash := strings.LastIndexByte(s, '/')
	if slash < 0 {
		return errors.New("it has no '/' before the database name")
	}
	head := s[:slash]
	if at := strings.LastIndexByte(head, '@'); at >= 0 {
		head = head[at+1:]
	}
	network, rest, ok := strings.Cut(head, "(")
	if !ok || !strings.HasSuffix(rest, ")") || network == "" {
		return errors.New("it names no server")
	}
	addr := strings.TrimSuffix(rest, ")")
	if strings.TrimSpace(addr) == "" {
		return errors.New("it names no server address")
	}
	if strings.HasPrefix(network, "tcp") {
		host := addr
		if h, _, err := net.SplitHostPort(addr); err == nil {
			host = h
		}
		if strings.TrimSpace(host) == "" {
			return errors.New("it names no host")
		}
	}
	return nil
}

// parseProblem returns what go-sql-driver found wrong in the DSN s, with
// its passwords taken out. Messages that would quote a piece of the DSN
// that may hold a password are replaced by the driver's own words.
func parseProblem(err error, s string) string {
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "invalid dbname"):
		return "malformed percent-encoding in the database name"
	case strings.HasPrefix(msg, "invalid value / unknown config name"):
		return "tls names no TLS configuration registered with mysql.RegisterTLSConfig"
	case strings.HasPrefix(msg, "invalid value / unknown server pub key name"):
		return "serverPubKey names no key registered with mysql.RegisterServerPubKey"
	case strings.HasPrefix(msg, "default addr for network"):
		return "unknown network"
	}
	msg = strings.TrimPrefix(msg, "invalid DSN: ")
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	return dsn.Redact(msg, secrets(s)...)
}

// secrets returns the texts of the DSN s that may be its password, as
// go-sql-driver would read it: between the first ':' and the last '@'
// before the last '/'; and, without such a '/', everything before the
// last '@'.
func secrets(s string) []string {
	head := s
	if slash := strings.LastIndexByte(s, '/'); slash >= 0 {
		head = s[:slash]
	}
	at := strings.LastIndexByte(head, '@')
	if at < 0 {
		at = strings.LastIndexByte(s, '@')
		if at < 0 {
			return nil
		}
		head = s
	}
	info := head[:at]
	out := []string{info}
	if _, pw, ok := strings.Cut(info, ":"); ok {
		out = append(out, pw)
	}
	return out
}
