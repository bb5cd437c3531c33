package postgres

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// pgx parses the DSN, and the driver's parameters never reach the
// server: they leave the runtime parameters, and the others stay.
func TestParseDSN_takesOwnParams(t *testing.T) {
	for _, s := range []string{
		"postgres://u:pw@h/db?distlock_table=t1&application_name=x&distlock_create_table=false&distlock_request_timeout=2s",
		"host=h dbname=db distlock_table = 't1'  application_name=x distlock_create_table=0 distlock_request_timeout=2s",
	} {
		st, err := parseDSN(s)
		if err != nil {
			t.Fatalf("parseDSN(%q): %v", s, err)
		}
		rp := st.pool.ConnConfig.RuntimeParams
		for k := range rp {
			if strings.HasPrefix(k, paramPrefix) {
				t.Errorf("%q: runtime parameter %s left for the server", s, k)
			}
		}
		if rp["application_name"] != "x" || st.config.Table != "t1" || !st.config.NoCreate || st.config.RequestTimeout.String() != "2s" {
			t.Errorf("%q: runtime parameters %v, config %+v", s, rp, st.config)
		}
	}
}

// The host and the database must be the DSN's own, whatever PG*
// variables say and whatever else in the DSN looks like them. A DSN that
// writes libpq's default socket directory names it.
func TestNamesServer(t *testing.T) {
	t.Setenv("PGHOST", "postgres")
	t.Setenv("PGDATABASE", "app")
	for _, tc := range []struct{ dsn, want string }{
		{"user=postgres dbname=app", "no host"},
		{"postgres://postgres@/app", "no host"},
		{"host=h user=app", "no database"},
		{"postgres://app@h?application_name=app", "no database"},
		{`host=/tmp,h\ x dbname=d`, ""},
		{"postgres://%2Ftmp,[::1]/d", ""},
		{"host=h1,h2 port=1,2 dbname=d", ""},
	} {
		cfg, err := pgconn.ParseConfig(tc.dsn)
		if err != nil {
			t.Fatal(err)
		}
		err = namesServer(tc.dsn, cfg)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("namesServer(%q) = %v, want %q", tc.dsn, err, tc.want)
		}
	}
	def, err := pgconn.ParseConfig("host=''")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseDSN("host=" + def.Host + " dbname=d"); err != nil {
		t.Errorf("the default socket directory, written: %v", err)
	}
}

// pgx's error quotes the connection string and pieces of it: what the
// driver reports keeps pgx's words only.
func TestPgxProblem(t *testing.T) {
	t.Setenv("PGPASSWORD", "env-s3cret")
	for _, s := range []string{
		"postgres://u:s3cret/x@h/db",
		"postgres://u:s3cret@h:x/db",
		"host=h s3cret",
		"host=h password=s3cret port=x",
		"host=h port=env-s3cret",
	} {
		_, err := pgconn.ParseConfig(s)
		if err == nil {
			t.Fatalf("%q parsed", s)
		}
		got := pgxProblem(err, s)
		if strings.Contains(got, "s3cret") || strings.Contains(got, "cannot parse") || got == "" {
			t.Errorf("pgxProblem(%q) = %q", s, got)
		}
	}
	if got := pgxProblem(errors.New(`bad "s3cret"`), "x"); got != "bad ..." {
		t.Errorf("pgxProblem of another error = %q", got)
	}
}

func TestNewTable(t *testing.T) {
	for _, name := range []string{"", "locks", "_x1", "app.locks", "Locks", strings.Repeat("a", 63)} {
		if _, err := newTable(name); err != nil {
			t.Errorf("newTable(%q): %v", name, err)
		}
	}
	for _, name := range []string{
		"bad-name", "1abc", `a"b`, "a;drop table x", "a.b.c", ".a", "a.", "a b", "ключ",
		strings.Repeat("a", 64), "app." + strings.Repeat("a", 60),
	} {
		if _, err := newTable(name); err == nil {
			t.Errorf("newTable(%q) succeeded, want an error", name)
		}
	}
	tb, _ := newTable("app.Locks")
	if tb.ident != `"app"."Locks"` || !strings.Contains(tb.release, `pg_notify('app.Locks', key)`) || tb.listen != `LISTEN "app.Locks"` {
		t.Errorf("table app.Locks: ident %s, listen %s, release %s", tb.ident, tb.listen, tb.release)
	}
}

// A DSN without pool_max_conns gets a pool of at least DefaultMaxConns
// connections; one that sets it gets what it sets, fewer included.
func TestParseDSN_poolSize(t *testing.T) {
	for _, tc := range []struct {
		dsn  string
		want int32
	}{
		{"postgres://u@h/db", max(DefaultMaxConns, 4, int32(runtime.NumCPU()))},
		{"host=h dbname=db", max(DefaultMaxConns, 4, int32(runtime.NumCPU()))},
		{"postgres://u@h/db?pool_max_conns=2", 2},
		{"host=h dbname=db pool_max_conns=40", 40},
	} {
		st, err := parseDSN(tc.dsn)
		if err != nil {
			t.Fatalf("parseDSN(%q): %v", tc.dsn, err)
		}
		if got := st.pool.MaxConns; got != tc.want {
			t.Errorf("%q: MaxConns %d, want %d", tc.dsn, got, tc.want)
		}
	}
}
