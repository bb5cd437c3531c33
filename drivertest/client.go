package drivertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/internal/testenv"
)

// Open opens a client of the driver registered as name on dsn, and closes
// it when the test ends. It fails the test if lock.Open fails.
func Open(t testing.TB, name, dsn string) *lock.Client {
	t.Helper()
	c, err := lock.Open(name, dsn)
	if err != nil {
		t.Fatalf("lock.Open: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// OpenPinged is [Open], with the client connected: it fails the test if
// Ping does not succeed within 20s.
func OpenPinged(t testing.TB, name, dsn string) *lock.Client {
	t.Helper()
	c := Open(t, name, dsn)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	return c
}

// NewClient returns a factory of clients on dsn, for
// conformance.Harness.NewClient: each opens a client of the driver
// registered as name, and fails the test if lock.Open fails. The suite
// closes the clients.
func NewClient(name, dsn string) func(t *testing.T) *lock.Client {
	return func(t *testing.T) *lock.Client {
		c, err := lock.Open(name, dsn)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
}

// NewDialerClient returns a factory of clients on dsn whose connections
// dial makes, for conformance.Harness.NewDialerClient: each opens a client
// of the driver registered as name with lock.OpenDialer, and fails the
// test if that fails. The suite closes the clients.
func NewDialerClient(name, dsn string) func(t *testing.T, dial driver.DialFunc) *lock.Client {
	return func(t *testing.T, dial driver.DialFunc) *lock.Client {
		c, err := lock.OpenDialer(name, dsn, dial)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
}

// DialerWorks checks lock.OpenDialer on a DSN the conformance suite does
// not run on, a TLS one say: a client of the driver registered as name on
// dsn, whose connections a dial of the test's makes, takes a key and gives
// it back, and that dial was used. It returns the first error.
func DialerWorks(t testing.TB, name, dsn string) error {
	t.Helper()
	var dials atomic.Int64
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	c, err := lock.OpenDialer(name, dsn, dial)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := c.TryAcquire(ctx, "dialer-"+RandomHex(6))
	if err != nil {
		return err
	}
	if err := l.Release(ctx); err != nil {
		return err
	}
	if dials.Load() == 0 {
		return errors.New("the client worked without a dial through the dialer")
	}
	return nil
}

// Connect opens a connection of d's to dsn, for tests that talk to a
// driver directly rather than through a lock.Client, and fails the test
// if it cannot. The caller closes the connection.
func Connect(t testing.TB, d driver.Driver, dsn string) driver.Conn {
	t.Helper()
	return testenv.Connect(t, d, dsn)
}

// Context returns a context that ends after d, or when the test ends.
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// RandomHex returns n random bytes in hexadecimal: a name no other test
// uses (a table, a prefix, a key).
func RandomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// WithParams appends the URL query parameters kv (name, value, name,
// value...) to the URL dsn.
func WithParams(dsn string, kv ...string) string {
	var b strings.Builder
	b.WriteString(dsn)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	for i := 0; i+1 < len(kv); i += 2 {
		b.WriteString(sep + url.QueryEscape(kv[i]) + "=" + url.QueryEscape(kv[i+1]))
		sep = "&"
	}
	return b.String()
}

// Query encodes the pairs kv (name, value, name, value...) as a URL query,
// a later pair replacing an earlier one of the same name: the defaults of
// a test's DSN first, then what the test asks for.
func Query(kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	return q.Encode()
}

// Hosts returns the host (host:port) of each of urls, failing the test if
// one does not parse.
func Hosts(t testing.TB, urls []string) []string {
	t.Helper()
	hosts := make([]string, len(urls))
	for i, s := range urls {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		hosts[i] = u.Host
	}
	return hosts
}

// Findings returns "severity rule" of each of fs, in order, as a settings
// check returned them, and fails t for a finding that does not say, in a
// line each, what goes wrong and what to change.
func Findings(t testing.TB, fs []driver.Finding) []string {
	t.Helper()
	var got []string
	for _, f := range fs {
		if f.Problem == "" || f.Fix == "" || strings.Contains(f.Problem+f.Fix, "\n") {
			t.Errorf("%v: a finding says in a line each what goes wrong and what to change", f)
		}
		got = append(got, f.Severity.String()+" "+f.Rule)
	}
	return got
}
