package postgres_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/internal/testenv"
	"github.com/jackc/pgx/v5"
)

// TLS with the server's certificate verified (sslmode=verify-full, against
// the CA that scripts/services.d/postgres-tls.sh made) and a password
// (SCRAM): the driver works over it; without the CA the certificate is
// refused, a wrong password fails, and no error shows a password; the
// role cannot connect without TLS.
func TestTLSAndPassword(t *testing.T) {
	dsn := testenv.Lookup(t, "DISTLOCK_POSTGRES_TLS_DSN")
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	password, _ := u.User.Password()
	table := freshTable(t, server(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	try := func(dsn string) error {
		c, err := lock.Open("postgres", withParams(dsn, "distlock_table", table))
		if err != nil {
			return err
		}
		defer c.Close()
		l, err := c.TryAcquire(ctx, "tls")
		if err != nil {
			return err
		}
		return l.Release(ctx)
	}
	if err := try(dsn); err != nil {
		t.Fatalf("verify-full with the CA and the password: %v", err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var ssl bool
	if err := conn.QueryRow(ctx, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&ssl); err != nil || !ssl {
		t.Errorf("the connection is not TLS: ssl=%v, %v", ssl, err)
	}

	vary := func(f func(q url.Values, u *url.URL)) string {
		v := *u
		q := v.Query()
		f(q, &v)
		v.RawQuery = q.Encode()
		return v.String()
	}
	const wrong = "not-the-password-4711"
	for _, c := range []struct {
		name, dsn, want string
	}{
		{"without the CA", vary(func(q url.Values, _ *url.URL) { q.Del("sslrootcert") }), "certificate"},
		{"a wrong password", vary(func(_ url.Values, u *url.URL) { u.User = url.UserPassword(u.User.Username(), wrong) }), "password"},
		{"without TLS", vary(func(q url.Values, _ *url.URL) { q.Set("sslmode", "disable"); q.Del("sslrootcert") }), "pg_hba.conf"},
	} {
		err := try(c.dsn)
		switch {
		case err == nil:
			t.Errorf("%s: the connection was accepted", c.name)
		case strings.Contains(err.Error(), password) || strings.Contains(err.Error(), wrong):
			t.Errorf("%s: the error shows a password: %v", c.name, err)
		case !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: %v, want an error about %q", c.name, err, c.want)
		}
	}
}
