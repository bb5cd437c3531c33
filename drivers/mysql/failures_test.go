package mysql_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	mysqldriver "github.com/distlock/lock/drivers/mysql"
	"github.com/distlock/lock/drivertest"
)

// hang stops the test server with SIGSTOP, and resumes it when the test
// ends.
func hang(t *testing.T) {
	t.Helper()
	ours(t)
	drivertest.HangAll(t, mariadb(t), func(t testing.TB) { waitServing(t, server(t)) })
}

// A hung server (SIGSTOP): acquisitions under a 3s deadline, on a client
// connected and on one connecting, end within 100ms of it, and a
// connection closed with an acquisition in flight closes within its bound
// and ends that acquisition at once.
func TestHang_keepsDeadlines(t *testing.T) {
	if testing.Short() {
		t.Skip("hangs the server")
	}
	dsn := withTable(t, server(t))
	connected := drivertest.OpenPinged(t, "mysql", dsn)
	ctx := drivertest.Context(t, 10*time.Second)
	l, err := connected.TryAcquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	drivertest.HungBackend{
		Connected:  connected,
		Connecting: open(t, dsn),
		Conn:       drivertest.Connect(t, mysqldriver.Driver{}, dsn),
		Hang:       hang,
		TTL:        time.Minute,
		CloseBound: time.Second, // closeTimeout
	}.KeepsDeadlines(t)
}

// A server that accepts connections and never answers ends TryAcquire
// within the request timeout with an error matching ErrUnavailable, and
// Close within it too.
func TestSilentServer_isUnavailable(t *testing.T) {
	drivertest.SilentServerIsUnavailable(t, "mysql", func(addr string) string {
		return "u@tcp(" + addr + ")/db?distlock_request_timeout=1s"
	})
}

// A hung server with the default request timeout: TryAcquire ends within
// it, with an error matching ErrUnavailable, never ErrNotAcquired.
func TestHang_tryAcquireEndsWithinRequestTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("hangs the server")
	}
	const timeout = time.Second
	c := drivertest.OpenPinged(t, "mysql", withTable(t, server(t), "distlock_request_timeout", timeout.String()))
	hang(t)
	start := time.Now()
	_, err := c.TryAcquire(context.Background(), "hung")
	took := time.Since(start)
	t.Logf("TryAcquire took %v: %v", took, err)
	if !errors.Is(err, lock.ErrUnavailable) || errors.Is(err, lock.ErrNotAcquired) {
		t.Errorf("TryAcquire on a hung server = %v, want an error matching ErrUnavailable and not ErrNotAcquired", err)
	}
	if err != nil && !strings.Contains(err.Error(), "request timeout of "+timeout.String()) {
		t.Errorf("TryAcquire on a hung server = %v: the error does not name the request timeout", err)
	}
	// The core's release of what the attempt may have taken has its own
	// bound of 2s.
	if took > timeout+2*time.Second+drivertest.Overshoot {
		t.Errorf("TryAcquire took %v, over the request timeout of %v and the cleanup's 2s", took, timeout)
	}
}

// Do's function is cancelled at the lock's ValidUntil when the server
// hangs while it runs.
func TestDo_hungServerCancelsAtValidUntil(t *testing.T) {
	if testing.Short() {
		t.Skip("hangs the server")
	}
	drivertest.DoCancelledAtValidUntil(t, func(t *testing.T) (*lock.Client, func()) {
		c, err := lock.Open("mysql", withTable(t, server(t), "distlock_request_timeout", "500ms"))
		if err != nil {
			t.Fatal(err)
		}
		return c, func() { hang(t) }
	})
}

// Credentials, a database or a table the server refuses end Acquire, with
// no deadline, within a second, with an error matching ErrMisconfigured
// that shows no password.
func TestAcquire_misconfiguredEndsAtOnce(t *testing.T) {
	plain := server(t)
	table := freshTable(t, plain)
	tls := tlsDSN(t)
	cfg := config(t, plain)
	drivertest.RefusedCredentials(t, "mysql", wrongPasswordText, [][2]string{
		{"wrongPassword", drivertest.WithParams(wrongPassword(t), "distlock_table", table)},
		{"unknownUser", drivertest.WithParams("no_such_user:"+wrongPasswordText+"@tcp("+cfg.Addr+")/distlock", "distlock_table", table)},
		{"unknownDatabase", drivertest.WithParams(strings.Replace(plain, "/distlock", "/no_such_database", 1), "distlock_table", table)},
		{"missingTable", drivertest.WithParams(plain, "distlock_table", "no_such_table_"+drivertest.RandomHex(4), "distlock_create_table", "false")},
		{"tlsAccountWithoutTLS", drivertest.WithParams(strings.Replace(tls, "?tls=custom", "", 1), "distlock_table", table)},
	})
}
