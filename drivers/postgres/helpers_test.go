package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/internal/testenv"
	"github.com/jackc/pgx/v5"
)

// ttl is the short lease the tests use where they wait for expiry: well
// above a round trip on a loaded machine.
const ttl = 500 * time.Millisecond

// server returns the test server's DSN, skipping the test without one.
func server(t testing.TB) string {
	t.Helper()
	return testenv.PostgresDSN(t)
}

// withParams appends URL query parameters (name, value, name, value...) to
// a URL DSN.
func withParams(dsn string, kv ...string) string {
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

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// freshTable returns the name of a lease table no other test uses, and
// drops the table when the test ends.
func freshTable(t testing.TB, dsn string) string {
	t.Helper()
	name := "distlock_test_" + randomHex(6)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("dropping table %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS "+pgx.Identifier{name}.Sanitize()); err != nil {
			t.Errorf("dropping table %s: %v", name, err)
		}
	})
	return name
}

// admin returns a plain connection to the test database, closed when the
// test ends.
func admin(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// open opens a client on dsn, closed when the test ends.
func open(t testing.TB, dsn string) *lock.Client {
	t.Helper()
	c, err := lock.Open("postgres", dsn)
	if err != nil {
		t.Fatalf("lock.Open: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
