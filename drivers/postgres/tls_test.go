package postgres_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/internal/secrettest"
	"github.com/distlock/lock/drivertest"
	"github.com/jackc/pgx/v5"
)

// TLS with the server's certificate verified (sslmode=verify-full, against
// the CA that scripts/services.d/postgres-tls.sh made) and a password
// (SCRAM): the driver works over it; without the CA the certificate is
// refused, a wrong password fails, and no error shows a password; the
// role cannot connect without TLS.
func TestTLSAndPassword(t *testing.T) {
	dsn := drivertest.Lookup(t, "DISTLOCK_POSTGRES_TLS_DSN")
	table := freshTable(t, server(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	try := func(dsn string) error {
		c, err := lock.Open("postgres", drivertest.WithParams(dsn, "distlock_table", table))
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
	if err := drivertest.DialerWorks(t, "postgres", drivertest.WithParams(dsn, "distlock_table", table)); err != nil {
		t.Errorf("verify-full through lock.OpenDialer's dial: %v", err)
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

	const wrong = "not-the-password-4711"
	secrettest.Refuse(t, dsn, try, []secrettest.Refusal{
		{Name: "without the CA", Vary: func(q url.Values, _ *url.URL) { q.Del("sslrootcert") }, Want: "certificate"},
		{Name: "a wrong password", Vary: func(_ url.Values, u *url.URL) { u.User = url.UserPassword(u.User.Username(), wrong) }, Want: "password"},
		{Name: "without TLS", Vary: func(q url.Values, _ *url.URL) { q.Set("sslmode", "disable"); q.Del("sslrootcert") }, Want: "pg_hba.conf"},
	}, wrong)
}
