package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/postgres"
)

const secret = "s3cr3t-Pa55"

func TestOpen_badDSN(t *testing.T) {
	cases := []struct{ name, dsn string }{
		{"badTableName", "postgres://u:" + secret + "@h/db?distlock_table=bad-name"},
		{"tableNameWithQuote", "postgres://u:" + secret + `@h/db?distlock_table=a%22b`},
		{"tableNameWithSQL", "postgres://u:" + secret + `@h/db?distlock_table=x%3Bdrop%20table%20y`},
		{"tableNameTooLong", "postgres://u:" + secret + "@h/db?distlock_table=" + strings.Repeat("t", 64)},
		{"emptyTableName", "postgres://u:" + secret + "@h/db?distlock_table="},
		{"badCreateFlag", "postgres://u:" + secret + "@h/db?distlock_create_table=maybe"},
		{"unknownParameter", "postgres://u:" + secret + "@h/db?distlock_tabel=locks"},
		{"badPort", "postgres://u:" + secret + "@h:notaport/db"},
		{"badSSLMode", "postgres://u:" + secret + "@h/db?sslmode=bogus"},
		{"badConnectTimeout", "postgres://u:" + secret + "@h/db?connect_timeout=soon"},
		{"badPoolSize", "postgres://u:" + secret + "@h/db?pool_max_conns=many"},
		{"badPercentEncoding", "postgres://u:" + secret + "@h/db?application_name=%zz"},
		{"unterminatedIPv6", "postgres://u:" + secret + "@[::1/db"},
		{"keywordValueBadPort", "host=h password=" + secret + " port=abc"},
		{"keywordValueUnterminated", "host=h password='" + secret},
		{"keywordValueNoEquals", "host=h password=" + secret + " sslmode"},
		{"keywordValueBadTable", "host=h password='" + secret + "' distlock_table='a.b.c'"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := lock.Open("postgres", tc.dsn)
			if err == nil {
				c.Close()
				t.Fatalf("lock.Open succeeded, want an error")
			}
			t.Logf("error: %v", err)
			if strings.Contains(err.Error(), secret) || strings.Contains(fmt.Sprintf("%+v %#v", err, err), secret) {
				t.Errorf("the error repeats the password: %v", err)
			}
			var le *lock.Error
			if !errors.As(err, &le) || le.Op != "open" {
				t.Errorf("error %v is not a *lock.Error of op open", err)
			}
		})
	}
}

// A DSN that names no server (no host, an empty entry in its host list,
// or no database) is refused at Open, with an error that says what is
// missing and how to take it from the environment, and that shows no
// password, whatever PGHOST and PGDATABASE say.
func TestOpen_noServer(t *testing.T) {
	t.Setenv("PGHOST", "127.0.0.1")
	t.Setenv("PGDATABASE", "distlock")
	for _, tc := range []struct{ name, dsn, want string }{
		{"empty", "", "no host"},
		{"blank", "  ", "no host"},
		{"bareURL", "postgres://", "no host"},
		{"bareURLLong", "postgresql://", "no host"},
		{"urlOnlyUser", "postgres://u:" + secret + "@", "no host"},
		{"urlOnlyPort", "postgres://u:" + secret + "@:5432/db", "no host"},
		{"urlNoHost", "postgres://u:" + secret + "@/db?sslmode=disable", "no host"},
		{"urlThreeSlashes", "postgres:///db", "no host"},
		{"urlEmptyHostParam", "postgres://u:" + secret + "@h/db?host=", "no host"},
		{"urlEmptyHostInList", "postgres://u:" + secret + "@h1,/db", "empty entry"},
		{"urlEmptyHostFirst", "postgres://u:" + secret + "@,h2:5432/db", "empty entry"},
		{"urlNoDatabase", "postgres://u:" + secret + "@h", "no database"},
		{"urlSlashNoDatabase", "postgres://u:" + secret + "@h:5432/", "no database"},
		{"urlQueryNoDatabase", "postgres://u:" + secret + "@h/?sslmode=disable", "no database"},
		{"urlEmptyDatabaseParam", "postgres://u:" + secret + "@h/db?dbname=", "no database"},
		{"keywordValueOnlyPassword", "password=" + secret, "no host"},
		{"keywordValueNoHost", "user=u password=" + secret + " dbname=db", "no host"},
		{"keywordValueEmptyHost", "host='' password=" + secret + " dbname=db", "no host"},
		{"keywordValueEmptyHostInList", "host=h1, password=" + secret + " dbname=db", "empty entry"},
		{"keywordValueNoDatabase", "host=h password=" + secret, "no database"},
		{"keywordValueEmptyDatabase", "host=h dbname='' password=" + secret, "no database"},
		{"onlyOurParams", "distlock_table=locks", "no host"},
		{"optInOff", "postgres://u:" + secret + "@/db?distlock_libpq_env=false", "no host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := lock.Open("postgres", tc.dsn)
			if err == nil {
				c.Close()
				t.Fatal("lock.Open succeeded, want an error")
			}
			t.Logf("error: %v", err)
			if s := err.Error(); !strings.Contains(s, tc.want) || !strings.Contains(s, "distlock_libpq_env=true") {
				t.Errorf("the error does not say %q and how to opt in", tc.want)
			}
			if strings.Contains(fmt.Sprintf("%v %+v %#v", err, err, err), secret) {
				t.Errorf("the error repeats the password: %v", err)
			}
		})
	}
	for _, dsn := range []string{
		"postgres://h/db",
		"postgres://h1,[::1]:5433/db",
		"postgres:///db?host=/tmp",
		"postgres://h?dbname=db",
		"postgres://h?database=db",
		"host=h dbname=db",
		"host=/tmp,h2 port=5432,5433 database=db",
		"postgres://?distlock_libpq_env=true",
		"distlock_libpq_env=1",
	} {
		if _, err := (postgres.Driver{}).OpenConnector(dsn); err != nil {
			t.Errorf("OpenConnector(%q): %v", dsn, err)
		}
	}
}

// With distlock_libpq_env=true, a DSN that names no server takes it from
// PGHOST, PGPORT, PGDATABASE and PGUSER, and works.
func TestOpen_libpqEnv(t *testing.T) {
	dsn := server(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	table := freshTable(t, dsn)
	t.Setenv("PGHOST", u.Hostname())
	t.Setenv("PGPORT", u.Port())
	t.Setenv("PGDATABASE", strings.TrimPrefix(u.Path, "/"))
	t.Setenv("PGUSER", u.User.Username())
	t.Setenv("PGSSLMODE", u.Query().Get("sslmode"))
	for _, dsn := range []string{
		"distlock_libpq_env=true distlock_table=" + table,
		"postgres://?distlock_libpq_env=true&distlock_table=" + table,
	} {
		c := open(t, dsn)
		ctx := ctxFor(t, 10*time.Second)
		l, err := c.TryAcquire(ctx, "env")
		if err != nil {
			t.Fatalf("%s: TryAcquire: %v", dsn, err)
		}
		if err := l.Release(ctx); err != nil {
			t.Errorf("%s: Release: %v", dsn, err)
		}
		if _, err := lock.Open("postgres", strings.Replace(dsn, "distlock_libpq_env=true", "distlock_libpq_env=false", 1)); err == nil {
			t.Errorf("%s without the opt-in: lock.Open succeeded", dsn)
		}
	}
}

// TestOpen_goodDSN checks DSNs that parse, without contacting a server,
// and that neither the connector nor an error of a failed connection
// shows the password.
func TestOpen_goodDSN(t *testing.T) {
	for _, dsn := range []string{
		"postgres://u:" + secret + "@127.0.0.1:1/db?sslmode=disable&connect_timeout=2&distlock_table=app.locks&distlock_create_table=false",
		"host=127.0.0.1 port=1 dbname=db sslmode=disable connect_timeout=2 password='" + secret + "' distlock_table=Locks",
		"postgresql://127.0.0.1:1/db?sslmode=disable&connect_timeout=2&password=" + secret,
	} {
		connector, err := postgres.Driver{}.OpenConnector(dsn)
		if err != nil {
			t.Errorf("OpenConnector: %v", err)
			continue
		}
		if s := fmt.Sprintf("%v %+v %#v %s", connector, connector, connector, connector); strings.Contains(s, secret) {
			t.Errorf("the connector prints the password: %s", s)
		}
		c, err := lock.Open("postgres", dsn)
		if err != nil {
			t.Errorf("lock.Open: %v", err)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = c.Ping(ctx)
		cancel()
		c.Close()
		if err == nil {
			t.Errorf("Ping of a server that is not there succeeded")
		} else if strings.Contains(fmt.Sprintf("%v %+v", err, err), secret) {
			t.Errorf("the connection error repeats the password: %v", err)
		}
	}
}

func TestNew_badConfig(t *testing.T) {
	if _, err := postgres.New(nil, postgres.Config{}); err == nil {
		t.Error("New(nil) succeeded")
	}
}
