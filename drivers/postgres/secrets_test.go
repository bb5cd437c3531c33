package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/distlock/lock/drivers/internal/secrettest"
	"github.com/distlock/lock/drivers/postgres"
	"github.com/distlock/lock/drivertest"
)

// withPassword returns the URL DSN dsn with its user's password set to pw.
func withPassword(t *testing.T, dsn, pw string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), pw)
	return u.String()
}

// TestSecrets_neverPrinted puts a password in DSNs and pools and checks
// that it shows in nothing the driver and the lock.Client print, return or
// log, whether the server answers (its trust authentication accepts any
// password) or cannot be reached.
func TestSecrets_neverPrinted(t *testing.T) {
	plain := server(t)
	pw := secrettest.Password
	dsn := withPassword(t, plain, pw)
	server, err := url.Parse(plain)
	if err != nil {
		t.Fatal(err)
	}
	closed := secrettest.ClosedAddr(t)
	closedHost, closedPort, _ := strings.Cut(closed, ":")

	t.Run("printed", func(t *testing.T) {
		sc := secrettest.New(t)
		table := freshTable(t, plain)
		for _, d := range []string{
			drivertest.WithParams(dsn, "distlock_table", table),
			"host=" + closedHost + " port=" + closedPort + " user=u password='" + pw + "' dbname=d sslmode=disable",
			"postgres://u:" + pw + "@" + closed + "," + server.Host + "/distlock?sslmode=prefer",
		} {
			connector, err := postgres.Driver{}.OpenConnector(d)
			sc.Connector("the connector of Driver.OpenConnector", connector, err)
		}

		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		pool, err := pgxpool.New(ctx, dsn)
		if err != nil {
			t.Fatalf("pgxpool.New: %s", secrettest.Elide(err.Error()))
		}
		defer pool.Close()
		cfg := postgres.Config{Table: table}
		sc.Printed("a Config", cfg)
		connector, err := postgres.New(pool, cfg)
		sc.UseConnector("the connector of New", connector, err, secrettest.Answers)
	})

	t.Run("accepted", func(t *testing.T) {
		sc := secrettest.New(t)
		table := freshTable(t, plain)
		for _, d := range []string{
			drivertest.WithParams(dsn, "distlock_table", table),
			drivertest.WithParams("postgres://"+server.User.Username()+"@"+closed+","+server.Host+server.Path, // the second host answers
				"sslmode", "disable", "password", pw, "distlock_table", table),
		} {
			sc.Use(secrettest.Elide(d), sc.Open("postgres", d), secrettest.Answers)
		}
	})

	t.Run("malformedDSN", func(t *testing.T) {
		sc := secrettest.New(t)
		h := server.Host
		for _, d := range []string{
			"postgres://u:" + pw + "@" + h + "/db?distlock_table=bad-name",
			"postgres://u:" + pw + "@" + h + "/db?distlock_tabel=locks",
			"postgres://u:" + pw + "@" + h + "/db?distlock_create_table=maybe",
			"postgres://u:" + pw + "/x@" + h + "/db",  // a '/' in the password ends the host early
			"postgres://u:" + pw + "%zz@" + h + "/db", // a bad escape
			"postgres://u:" + pw + "%@" + h + "/db",   // a bad escape at the end
			"postgres://u:" + pw + "@" + closedHost + ":5x5/db",
			"postgres://u:" + pw + "@[::1/db",
			"postgres://u:" + pw + "@[::1]x/db",
			"postgres://u:" + pw + "@" + h + "/db?sslmode=bogus",
			"postgres://u:" + pw + "@" + h + "/db?connect_timeout=" + pw,
			"postgres://u:" + pw + "@" + h + "/db?sslmode=verify-full&sslrootcert=/nonexistent",
			"postgres://u:" + pw + "@" + h + "/db?sslmode=require&sslcert=/nonexistent&sslkey=/nonexistent&sslpassword=" + pw,
			"postgres://" + h + "/db?sslmode=bogus&password=" + pw,
			"postgres://u:" + pw + "@" + h + "/db?target_session_attrs=bogus",
			"postgres://u:" + pw + "@" + h + "/db?pool_max_conns=0",
			"host=h password=" + pw + " port=abc",
			"host=h password='" + pw,
			"host=h password=" + pw + " sslmode",
			"host=h password='" + pw + "' distlock_table='a.b.c'",
			"host=h password=" + pw + "\x00",
		} {
			sc.OpenFails("postgres", d)
		}
	})

	t.Run("failing", func(t *testing.T) {
		sc := secrettest.New(t)
		for _, d := range []string{
			"postgres://u:" + pw + "@" + closed + "/db?sslmode=disable&connect_timeout=2",
			"postgres://u:" + pw + "@" + closed + "/db?connect_timeout=2", // sslmode=prefer: two attempts
			"host=" + closedHost + " port=" + closedPort + " user=u password=" + pw + " dbname=db connect_timeout=2",
			"postgres://nobody:" + pw + "@" + server.Host + server.Path + "?sslmode=disable", // no such role
		} {
			sc.Use(secrettest.Elide(d), sc.Open("postgres", d), secrettest.Fails)
		}
	})
}

// TestConnector_String checks what connectors print: server, other hosts,
// database, user and table.
func TestConnector_String(t *testing.T) {
	pw := secrettest.Password
	for _, tc := range []struct{ dsn, want string }{
		{"postgres://u:" + pw + "@10.0.0.1:5433/db?sslmode=disable&distlock_table=app.locks",
			"postgres(host=10.0.0.1 port=5433 database=db user=u table=app.locks)"},
		{"postgres://u:" + pw + "@10.0.0.1:5433,10.0.0.2,[::1]:5434/db", // sslmode=prefer: each host with and without TLS
			"postgres(host=10.0.0.1 port=5433 fallbacks=10.0.0.2:5432,[::1]:5434 database=db user=u table=distlock_leases)"},
		{"host=/tmp port=5432 user=u password=" + pw + " dbname=db",
			"postgres(host=/tmp port=5432 database=db user=u table=distlock_leases)"},
	} {
		c, err := postgres.Driver{}.OpenConnector(tc.dsn)
		if err != nil {
			t.Fatalf("OpenConnector(%s): %s", secrettest.Elide(tc.dsn), secrettest.Elide(err.Error()))
		}
		for _, verb := range secrettest.Verbs {
			if got := fmt.Sprintf(verb, c); got != tc.want {
				t.Errorf("%s of %s: got %s, want %s", verb, secrettest.Elide(tc.dsn), got, tc.want)
			}
		}
	}
	if got, want := fmt.Sprint(&postgres.Connector{}), "postgres(table=)"; got != want {
		t.Errorf("a zero Connector: got %s, want %s", got, want)
	}
}
