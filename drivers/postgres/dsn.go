package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The driver's own DSN parameters. Every parameter whose name starts with
// paramPrefix belongs to the driver: it is removed before the DSN goes to
// pgx, and an unknown one is an error rather than a runtime parameter sent
// to the server.
const (
	paramPrefix   = "distlock_"
	paramTable    = "distlock_table"
	paramCreate   = "distlock_create_table"
	paramTimeout  = "distlock_request_timeout"
	paramLibpqEnv = "distlock_libpq_env"
	knownParams   = paramTable + ", " + paramCreate + ", " + paramTimeout + " and " + paramLibpqEnv
)

// dsn is a DSN split into the driver's parameters and the rest.
type dsn struct {
	rest    string            // the DSN without the driver's parameters, for pgx
	params  map[string]string // the driver's parameters, decoded
	secrets []string          // passwords, as written and decoded, to keep out of errors
	hosts   []string          // the host list the DSN names, if any
	dbname  string            // the database it names, if any
}

// splitDSN removes the driver's parameters from s. It follows the syntax
// pgx (and libpq) accepts: a postgres:// or postgresql:// URL, or a
// keyword/value string. Its errors never quote the DSN.
func splitDSN(s string) (dsn, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return dsn{}, errors.New("contains a NUL byte")
	}
	if strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://") {
		return splitURL(s)
	}
	return splitKeywordValue(s)
}

// splitURL splits a connection URL. It locates the query as libpq does:
// the userinfo ends at an '@' that comes before any '/', the host list and
// the path end at the first '?'.
func splitURL(s string) (dsn, error) {
	d := dsn{params: make(map[string]string)}
	rest, ok := strings.CutPrefix(s, "postgresql://")
	if !ok {
		rest, _ = strings.CutPrefix(s, "postgres://")
	}
	if i := strings.IndexAny(rest, "@/"); i >= 0 && rest[i] == '@' {
		if _, pw, ok := strings.Cut(rest[:i], ":"); ok && pw != "" {
			d.addSecret(pw, uriDecodeLenient(pw))
		}
		rest = rest[i+1:]
	}
	// Hosts: netloc[:port], separated by commas; an IPv6 address is in
	// brackets and may hold any character but ']'.
	for {
		host := rest
		if strings.HasPrefix(rest, "[") {
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return dsn{}, errors.New(`malformed URL: unterminated "[" in a host address`)
			}
			rest = rest[end+1:]
		} else if i := strings.IndexAny(rest, ":/?,"); i >= 0 {
			rest = rest[i:]
		} else {
			rest = ""
		}
		d.hosts = append(d.hosts, uriDecodeLenient(host[:len(host)-len(rest)]))
		if strings.HasPrefix(rest, ":") {
			if i := strings.IndexAny(rest, "/?,"); i >= 0 {
				rest = rest[i:]
			} else {
				rest = ""
			}
		}
		if !strings.HasPrefix(rest, ",") {
			break
		}
		rest = rest[1:]
	}
	if path, ok := strings.CutPrefix(rest, "/"); ok {
		path, _, _ = strings.Cut(path, "?")
		d.dbname = uriDecodeLenient(path)
	}
	if len(d.hosts) == 1 && d.hosts[0] == "" {
		d.hosts = nil // postgres:///db: no host at all
	}
	q := strings.IndexByte(rest, '?')
	if q < 0 {
		d.rest = s
		return d, nil
	}
	base := s[:len(s)-len(rest)+q]
	var kept []string
	for pair := range strings.SplitSeq(rest[q+1:], "&") {
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		key := uriDecodeLenient(rawKey)
		switch {
		case strings.HasPrefix(key, paramPrefix):
			v, err := uriDecode(rawValue)
			if err != nil {
				return dsn{}, fmt.Errorf("parameter %s: %w", key, err)
			}
			d.params[key] = v
			continue
		case key == "password" || key == "sslpassword":
			d.addSecret(rawValue, uriDecodeLenient(rawValue))
		default:
			d.noteServer(key, uriDecodeLenient(rawValue))
		}
		kept = append(kept, pair)
	}
	d.rest = base
	if len(kept) > 0 {
		d.rest += "?" + strings.Join(kept, "&")
	}
	return d, nil
}

// splitKeywordValue splits a keyword/value string, with the quoting and
// escaping rules of libpq: a value is a run of non-space characters, or is
// in single quotes; a backslash escapes the next character in both.
// The other pairs are kept as written.
func splitKeywordValue(s string) (dsn, error) {
	d := dsn{params: make(map[string]string)}
	var kept []string
	rest := strings.TrimLeft(s, spaces)
	for rest != "" {
		start := rest
		eq := strings.IndexByte(rest, '=')
		if eq < 0 {
			return dsn{}, errors.New(`malformed keyword/value string: a keyword without "="`)
		}
		key := strings.Trim(rest[:eq], spaces)
		if key == "" || strings.ContainsAny(key, spaces) {
			return dsn{}, errors.New(`malformed keyword/value string: a keyword not followed by "="`)
		}
		rest = strings.TrimLeft(rest[eq+1:], spaces)
		var raw string
		if strings.HasPrefix(rest, "'") {
			end := 1
			for ; end < len(rest) && rest[end] != '\''; end++ {
				if rest[end] == '\\' {
					end++
				}
			}
			if end >= len(rest) {
				return dsn{}, errors.New("malformed keyword/value string: unterminated quoted value")
			}
			raw, rest = rest[1:end], rest[end+1:]
		} else {
			end := 0
			for ; end < len(rest) && !strings.ContainsRune(spaces, rune(rest[end])); end++ {
				if rest[end] == '\\' {
					end++
				}
			}
			end = min(end, len(rest))
			raw, rest = rest[:end], rest[end:]
		}
		pair := start[:len(start)-len(rest)]
		rest = strings.TrimLeft(rest, spaces)
		value := unescapeKeywordValue(raw)
		switch {
		case strings.HasPrefix(key, paramPrefix):
			d.params[key] = value
			continue
		case key == "password" || key == "sslpassword":
			d.addSecret(raw, value)
		default:
			d.noteServer(key, value)
		}
		kept = append(kept, pair)
	}
	d.rest = strings.Join(kept, " ")
	return d, nil
}

const spaces = " \t\n\r\v\f"

func unescapeKeywordValue(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			if i == len(s) { // a trailing backslash is dropped
				break
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// uriDecode percent-decodes a URL component as libpq does: leading and
// trailing spaces are dropped, and "%XX" is the only escape.
func uriDecode(s string) (string, error) {
	s = strings.Trim(s, " ")
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", errors.New("invalid percent-encoding")
		}
		n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil || n == 0 {
			return "", errors.New("invalid percent-encoding")
		}
		b.WriteByte(byte(n))
		i += 2
	}
	return b.String(), nil
}

// uriDecodeLenient decodes what uriDecode can, and returns s otherwise.
func uriDecodeLenient(s string) string {
	if v, err := uriDecode(s); err == nil {
		return v
	}
	return s
}

// noteServer notes the host list or the database that the parameter
// key=value names, if it names one. The last one given counts, as in pgx.
func (d *dsn) noteServer(key, value string) {
	switch key {
	case "host":
		d.hosts = nil
		if strings.TrimSpace(value) != "" {
			d.hosts = strings.Split(value, ",")
		}
	case "dbname", "database":
		d.dbname = value
	}
}

// namesServer checks that the DSN names its server: a host (each of its
// hosts, in a list) and a database. Else pgx would take them from PGHOST
// and PGDATABASE, or connect to the local socket.
func (d *dsn) namesServer() error {
	switch {
	case len(d.hosts) == 0:
		return errors.New("it names no host")
	case slices.ContainsFunc(d.hosts, func(h string) bool { return strings.TrimSpace(h) == "" }):
		return errors.New("its host list has an empty entry")
	case d.dbname == "":
		return errors.New("it names no database")
	}
	return nil
}

func (d *dsn) addSecret(secrets ...string) {
	for _, s := range secrets {
		if s != "" && !slices.Contains(d.secrets, s) {
			d.secrets = append(d.secrets, s)
		}
	}
}

// redact replaces every secret of d in msg.
func (d *dsn) redact(msg string) string {
	secrets := slices.Clone(d.secrets)
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) }) // longest first
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, "xxxxx")
	}
	return msg
}

// settings is the configuration a DSN describes.
type settings struct {
	pool   *pgxpool.Config
	config Config
}

// parseDSN parses a DSN for [Driver.OpenConnector]. Its errors quote
// neither the DSN nor any password in it.
func parseDSN(s string) (settings, error) {
	d, err := splitDSN(s)
	if err != nil {
		return settings{}, fmt.Errorf("invalid DSN: %w", err)
	}
	var (
		cfg      Config
		libpqEnv bool
	)
	for k, v := range d.params {
		switch k {
		case paramTable:
			if v == "" {
				return settings{}, fmt.Errorf("invalid DSN: %s is empty", paramTable)
			}
			cfg.Table = v
		case paramCreate:
			create, err := strconv.ParseBool(v)
			if err != nil {
				return settings{}, fmt.Errorf("invalid DSN: %s=%q is not true or false", paramCreate, truncate(v, 32))
			}
			cfg.NoCreate = !create
		case paramTimeout:
			t, err := time.ParseDuration(v)
			if err != nil || t <= 0 {
				return settings{}, fmt.Errorf("invalid DSN: %s=%q is not a positive duration, such as 2s or 500ms", paramTimeout, truncate(v, 32))
			}
			cfg.RequestTimeout = t
		case paramLibpqEnv:
			if libpqEnv, err = strconv.ParseBool(v); err != nil {
				return settings{}, fmt.Errorf("invalid DSN: %s=%q is not true or false", paramLibpqEnv, truncate(v, 32))
			}
		default:
			return settings{}, fmt.Errorf("invalid DSN: unknown parameter %q (the driver knows %s)", truncate(k, 64), knownParams)
		}
	}
	if _, err := newTable(cfg.Table); err != nil {
		return settings{}, fmt.Errorf("invalid DSN: %s: %w", paramTable, err)
	}
	if err := d.namesServer(); err != nil && !libpqEnv {
		return settings{}, fmt.Errorf("invalid DSN: %w: write postgres://host/dbname or host=... dbname=..., "+
			"or add %s=true to take what it leaves out from PGHOST, PGDATABASE and libpq's defaults", err, paramLibpqEnv)
	}
	pc, err := pgxpool.ParseConfig(d.rest)
	if err != nil {
		// pgx's parse errors quote the connection string, with a best-effort
		// redaction of passwords, and keep it whole in a field: report the
		// message only, with every password we know of taken out.
		return settings{}, errors.New("invalid DSN: " + d.redact(err.Error()))
	}
	timeout := cfg.requestTimeout()
	if pc.ConnConfig.ConnectTimeout == 0 {
		// Pool connections are made in the background, whoever waits for
		// them: this bounds them where connect_timeout does not.
		pc.ConnConfig.ConnectTimeout = timeout
	}
	if !setsRuntimeParam(pc, "synchronous_commit") {
		pc.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			return raiseSynchronousCommit(ctx, conn)
		}
	}
	return settings{pool: pc, config: cfg}, nil
}

// setsRuntimeParam reports whether the DSN sets the server parameter name,
// directly or in "options".
func setsRuntimeParam(pc *pgxpool.Config, name string) bool {
	rp := pc.ConnConfig.RuntimeParams
	_, ok := rp[name]
	return ok || strings.Contains(rp["options"], name)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}
