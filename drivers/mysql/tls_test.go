package mysql_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/internal/secrettest"
	"github.com/distlock/lock/drivertest"
	"github.com/go-sql-driver/mysql"
)

// wrongPasswordText is the password the tests give in place of the right
// one.
const wrongPasswordText = "not-the-password-4711"

var registerOnce sync.Once

// tlsDSN returns the DSN of the test server's TLS-and-password account,
// whose tls=custom names a TLS configuration that trusts the test CA,
// registered with go-sql-driver here. It skips the test without them.
func tlsDSN(t testing.TB) string {
	t.Helper()
	dsn := drivertest.Lookup(t, "DISTLOCK_MYSQL_TLS_DSN")
	caFile := drivertest.Lookup(t, "DISTLOCK_MYSQL_TLS_CA")
	registerOnce.Do(func() {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			t.Fatalf("no certificate in %s", caFile)
		}
		if err := mysql.RegisterTLSConfig("custom", &tls.Config{RootCAs: pool}); err != nil {
			t.Fatal(err)
		}
		if err := mysql.RegisterTLSConfig("untrusted", &tls.Config{}); err != nil {
			t.Fatal(err)
		}
	})
	return dsn
}

// withPassword returns the DSN dsn with its password replaced by pw.
func withPassword(t testing.TB, dsn, pw string) string {
	t.Helper()
	cfg := config(t, dsn)
	return strings.Replace(dsn, cfg.User+":"+cfg.Passwd+"@", cfg.User+":"+pw+"@", 1)
}

// wrongPassword returns the TLS account's DSN with a wrong password.
func wrongPassword(t testing.TB) string {
	t.Helper()
	return withPassword(t, tlsDSN(t), wrongPasswordText)
}

// TLS with the server's certificate verified against the test CA, and a
// password: the driver works over it. Without the CA the certificate is
// refused, a wrong password fails, the account cannot connect without
// TLS, and no error shows a password.
func TestTLSAndPassword(t *testing.T) {
	dsn := tlsDSN(t)
	table := freshTable(t, server(t))
	try := func(dsn string) error { return acquireOnTable(dsn, table) }
	if err := try(dsn); err != nil {
		t.Fatalf("TLS with the CA and the password: %v", err)
	}
	var cipher, name string
	if err := admin(t, dsn).QueryRowContext(t.Context(), "SHOW SESSION STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher); err != nil || cipher == "" {
		t.Errorf("the connection is not TLS: cipher %q, %v", cipher, err)
	}

	right := config(t, dsn).Passwd
	secrettest.Refuse(t, mysqlURL(dsn), func(u string) error { return try(fromURL(u)) }, []secrettest.Refusal{
		{Name: "without the CA", Vary: func(q url.Values, _ *url.URL) { q.Set("tls", "untrusted") }, Want: "certificate"},
		{Name: "a wrong password", Vary: func(_ url.Values, u *url.URL) { u.User = url.UserPassword(u.User.Username(), wrongPasswordText) }, Want: "Access denied"},
		{Name: "without TLS", Vary: func(q url.Values, _ *url.URL) { q.Del("tls") }, Want: "Access denied"},
	}, wrongPasswordText, right)
}

// mysqlURL writes go-sql-driver's DSN user:pw@tcp(addr)/db?q as a URL,
// mysql://user:pw@addr/db?q, so that secrettest.Refuse can vary it.
func mysqlURL(dsn string) string {
	head, rest, _ := strings.Cut(dsn, "@tcp(")
	addr, tail, _ := strings.Cut(rest, ")")
	user, pw, _ := strings.Cut(head, ":")
	return "mysql://" + url.UserPassword(user, pw).String() + "@" + addr + tail
}

// fromURL is the inverse of mysqlURL.
func fromURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	pw, _ := u.User.Password()
	dsn := u.User.Username() + ":" + pw + "@tcp(" + u.Host + ")" + u.Path
	if u.RawQuery != "" {
		dsn += "?" + u.RawQuery
	}
	return dsn
}

// acquireOnTable opens a client on dsn and table, takes a lock and
// releases it.
func acquireOnTable(dsn, table string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := lock.Open("mysql", drivertest.WithParams(dsn, "distlock_table", table))
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
