package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/distlock/lock/driver/dsn"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// paramPrefix starts the name of every parameter of the driver's own.
// pgx reads the DSN, and the driver takes these out of its runtime
// parameters, so that they never reach the server. An unknown one is an
// error.
const paramPrefix = "distlock_"

// paramLibpqEnv lets a DSN leave its host or database to libpq's
// environment.
const paramLibpqEnv = "distlock_libpq_env"

// params are the driver's own parameters.
var params = dsn.Params{
	{Name: "distlock_table", Kind: dsn.String, Default: DefaultTable, Doc: "The lease table: a name, or schema.name."},
	{Name: "distlock_create_table", Kind: dsn.Bool, Default: "true", Doc: "False: never create the table, only check that it exists."},
	{Name: "distlock_request_timeout", Kind: dsn.Duration, Default: DefaultRequestTimeout.String(), Doc: "Bounds each call, connecting included."},
	{Name: paramLibpqEnv, Kind: dsn.Bool, Default: "false", Doc: "True: take the host and database the DSN leaves out from PGHOST, PGDATABASE and libpq's defaults."},
}

// settings is the configuration a DSN describes.
type settings struct {
	pool   *pgxpool.Config
	config Config
}

// parseDSN parses a DSN for [Driver.OpenConnector]: pgx reads it, with
// libpq's URL and keyword/value syntax, and the driver takes its own
// parameters out. Its errors quote neither the DSN nor any password.
func parseDSN(s string) (settings, error) {
	pc, err := pgxpool.ParseConfig(s)
	if err != nil {
		return settings{}, errors.New("invalid DSN: " + pgxProblem(err, s))
	}
	values, err := takeParams(pc.ConnConfig.RuntimeParams)
	if err != nil {
		return settings{}, fmt.Errorf("invalid DSN: %w", err)
	}
	cfg := Config{
		Table:          values.String("distlock_table"),
		NoCreate:       !values.Bool("distlock_create_table"),
		RequestTimeout: values.Duration("distlock_request_timeout"),
	}
	if _, err := newTable(cfg.Table); err != nil {
		return settings{}, fmt.Errorf("invalid DSN: distlock_table: %w", err)
	}
	if err := namesServer(s, &pc.ConnConfig.Config); err != nil && !values.Bool(paramLibpqEnv) {
		return settings{}, fmt.Errorf("invalid DSN: %w: write postgres://host/dbname or host=... dbname=..., "+
			"or add %s=true to take what it leaves out from PGHOST, PGDATABASE and libpq's defaults", err, paramLibpqEnv)
	}
	if !setsPoolSize(s) {
		pc.MaxConns = max(pc.MaxConns, DefaultMaxConns)
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

// DefaultMaxConns is the least number of connections that a pool of the
// driver's own may open when the DSN sets no pool_max_conns: pgx's own
// default, the greater of 4 and the number of CPUs, is raised to it. A
// lock's call holds a connection for one round trip, and a call that
// finds every connection in use waits for one, which costs more CPU than
// the round trip itself (DESIGN.md, "The pool"). Connections are opened
// only when calls need them at once.
const DefaultMaxConns = 16

// setsPoolSize reports whether the DSN s sets pool_max_conns.
func setsPoolSize(s string) bool {
	cc, err := pgconn.ParseConfig(s)
	if err != nil {
		return false
	}
	_, ok := cc.RuntimeParams["pool_max_conns"]
	return ok
}

// takeParams removes the driver's parameters from rp, pgx's runtime
// parameters, and checks them.
func takeParams(rp map[string]string) (dsn.Values, error) {
	q := make(url.Values)
	for k, v := range rp {
		if strings.HasPrefix(k, paramPrefix) {
			q.Set(k, v)
			delete(rp, k)
		}
	}
	return params.Parse(q)
}

// namesServer checks that the DSN s names its server: a host (each of
// its hosts, in a list) and a database. Else pgx took them from PGHOST
// and PGDATABASE, or from libpq's defaults (the local socket).
func namesServer(s string, cc *pgconn.Config) error {
	own, err := ownKeys(s, "host", "database")
	if err != nil {
		return err
	}
	hosts := []string{cc.Host}
	for _, f := range cc.Fallbacks {
		hosts = append(hosts, f.Host)
	}
	// An empty entry of the host list is libpq's default host, which the
	// DSN does not write.
	written := 0
	for _, h := range hosts {
		if writes(s, h) {
			written++
		}
	}
	switch {
	case !own["host"] || written == 0:
		return errors.New("it names no host")
	case written < len(hosts):
		return errors.New("its host list has an empty entry")
	case !own["database"] || cc.Database == "":
		return errors.New("it names no database")
	}
	return nil
}

// libpqKeys are the keys pgx reads that are not runtime parameters.
var libpqKeys = []string{
	"host", "port", "database", "user", "password", "passfile", "connect_timeout",
	"ssl", "sslmode", "sslkey", "sslcert", "sslcertmode", "sslrootcert", "sslnegotiation", "sslpassword", "sslsni",
	"krbspn", "krbsrvname", "target_session_attrs", "service", "servicefile",
	"min_protocol_version", "max_protocol_version", "channel_binding", "require_auth",
}

// ownKeys returns which of keys the DSN s itself sets, not PG* variables.
// It asks pgx, which refuses a key of the DSN that is not allowed: a key
// is the DSN's if allowing all others fails.
func ownKeys(s string, keys ...string) (map[string]bool, error) {
	base, err := pgconn.ParseConfig(s)
	if err != nil {
		return nil, errors.New("pgx cannot parse it")
	}
	allowed := slices.Concat(libpqKeys, slices.Collect(maps.Keys(base.RuntimeParams)))
	if _, err := pgconn.ParseConfigWithOptions(s, pgconn.ParseConfigOptions{ConnStringAllowedKeys: allowed}); err != nil {
		return nil, errors.New("it has a parameter pgx knows and this driver does not, so it cannot tell what it names")
	}
	own := make(map[string]bool)
	for _, key := range keys {
		others := slices.DeleteFunc(slices.Clone(allowed), func(k string) bool { return k == key })
		_, err := pgconn.ParseConfigWithOptions(s, pgconn.ParseConfigOptions{ConnStringAllowedKeys: others})
		own[key] = err != nil
	}
	return own, nil
}

// writes reports whether the DSN s writes host, as is, percent-encoded or
// after a backslash.
func writes(s, host string) bool {
	if decoded, err := url.PathUnescape(s); err == nil && strings.Contains(decoded, host) {
		return true
	}
	return strings.Contains(s, host) || strings.Contains(strings.ReplaceAll(s, `\`, ""), host)
}

// setsRuntimeParam reports whether the DSN sets the server parameter name,
// directly or in "options".
func setsRuntimeParam(pc *pgxpool.Config, name string) bool {
	rp := pc.ConnConfig.RuntimeParams
	_, ok := rp[name]
	return ok || strings.Contains(rp["options"], name)
}

// quoted matches a quoted text in pgx's errors: the connection string
// between backquotes, values between double quotes.
var quoted = regexp.MustCompile("`[^`]*`|\"(?:[^\"\\\\]|\\\\.)*\"")

// pgxProblem returns what pgx found wrong in the DSN s. pgx's errors quote
// the connection string, with passwords masked on a best-effort basis, and
// values that may be pieces of a password: this keeps pgx's words only,
// and takes out any password of s or of the environment it can find.
func pgxProblem(err error, s string) string {
	msg := err.Error()
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		// "cannot parse `...`: what (why)": the connection string may hold
		// a backquote, so cut after the last "`: " before what pgx says.
		head := msg
		if inner := pe.Unwrap(); inner != nil {
			head = strings.TrimSuffix(msg, " ("+inner.Error()+")")
		}
		if i := strings.LastIndex(head, "`: "); i >= 0 {
			msg = msg[i+len("`: "):]
		}
	}
	msg = quoted.ReplaceAllString(msg, "...")
	secrets := append(dsn.URLSecrets(s), os.Getenv("PGPASSWORD"), os.Getenv("PGSSLPASSWORD"))
	return dsn.Redact(msg, secrets...)
}
