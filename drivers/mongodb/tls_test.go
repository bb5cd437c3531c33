package mongodb_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/internal/secrettest"
	"github.com/distlock/lock/drivertest"
)

// TestTLSAndPassword runs on the FerretDB of
// scripts/services.d/mongodb-tls.sh: TLS only, with the server's
// certificate verified against the CA that script made, and passwords that
// PostgreSQL checks behind FerretDB (DESIGN.md, "TLS and passwords"). The
// driver works over it with the CA and the password; without the CA the
// certificate is refused; a wrong password, or none, fails with an error
// that says authentication failed; a connection without TLS fails. No error
// or log line shows a password.
func TestTLSAndPassword(t *testing.T) {
	uri := drivertest.Lookup(t, "DISTLOCK_MONGODB_TLS_URI")
	// That FerretDB keeps its data in our PostgreSQL, which the postgres
	// driver's tests restart: share it, as pgguard's tests do.
	release, err := drivertest.Hold(drivertest.Shared("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	password, _ := u.User.Password()
	const wrong = "not-the-password-4711"
	coll := "grants_" + drivertest.RandomHex(6)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var logs bytes.Buffer
	try := func(uri string) error {
		dsn := drivertest.WithParams(uri, "distlock_database", testDB, "distlock_collection", coll,
			"serverSelectionTimeoutMS", "2000", "connectTimeoutMS", "2000")
		c, err := lock.Open("mongodb", dsn)
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetLogger(slog.New(slog.NewTextHandler(&logs, nil)))
		l, err := c.TryAcquire(ctx, "tls")
		if err != nil {
			return err
		}
		return l.Release(ctx)
	}
	if err := try(uri); err != nil {
		t.Fatalf("TLS with the CA and the password: %v", err)
	}
	if err := drivertest.DialerWorks(t, "mongodb", drivertest.WithParams(uri, "distlock_database", testDB, "distlock_collection", coll)); err != nil {
		t.Errorf("TLS through lock.OpenDialer's dial: %v", err)
	}
	admin := adminClient(t, uri)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := admin.Database(testDB).Collection(coll).Drop(ctx); err != nil {
			t.Errorf("dropping collection %s: %v", coll, err)
		}
	})

	secrettest.Refuse(t, uri, try, []secrettest.Refusal{
		{Name: "without the CA", Vary: func(q url.Values, _ *url.URL) { q.Del("tlsCAFile") }, Want: "certificate"},
		{Name: "a wrong password", Vary: func(_ url.Values, u *url.URL) { u.User = url.UserPassword(u.User.Username(), wrong) }, Want: "password authentication failed"},
		{Name: "no credentials", Vary: func(q url.Values, u *url.URL) { u.User = nil; q.Del("authMechanism") }, Want: "password authentication failed"},
		{Name: "without TLS", Vary: func(q url.Values, _ *url.URL) { q.Del("tls"); q.Del("tlsCAFile") }, Want: "connection closed"},
	}, wrong)
	if s := logs.String(); strings.Contains(s, password) || strings.Contains(s, wrong) {
		t.Errorf("the logs show a password:\n%s", s)
	}
}
