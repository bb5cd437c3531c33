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
	"github.com/distlock/lock/drivertest"
	"github.com/jackc/pgx/v5"
)

// A server that refuses the credentials, the database or the table ends
// Acquire, with no deadline, within a second and with an error matching
// ErrMisconfigured that shows no password.
func TestAcquire_misconfiguredEndsAtOnce(t *testing.T) {
	const wrong = "not-the-password-4711"
	tlsDSN := drivertest.Lookup(t, "DISTLOCK_POSTGRES_TLS_DSN")
	plain := server(t)
	right, _ := mustURL(t, tlsDSN).User.Password()
	table := freshTable(t, plain)
	for _, tc := range []struct{ name, dsn string }{
		{"wrongPassword", drivertest.WithParams(withPassword(t, tlsDSN, wrong), "distlock_table", table)},                                                          // 28P01
		{"unknownRole", drivertest.WithParams(withPassword(t, strings.Replace(plain, "postgres@", "no_such_role@", 1), wrong), "distlock_table", table)},           // 28000
		{"unknownDatabase", drivertest.WithParams(withPassword(t, strings.Replace(plain, "/distlock?", "/no_such_database?", 1), wrong), "distlock_table", table)}, // 3D000
		{"missingTable", drivertest.WithParams(withPassword(t, plain, wrong), "distlock_table", "no_such_table_"+drivertest.RandomHex(4), "distlock_create_table", "false")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := open(t, tc.dsn)
			start := time.Now()
			l, err := c.Acquire(context.Background(), "misconfigured")
			took := time.Since(start)
			t.Logf("Acquire took %v: %v", took, err)
			if err == nil {
				l.Release(context.Background())
				t.Fatal("Acquire succeeded")
			}
			if !errors.Is(err, lock.ErrMisconfigured) {
				t.Errorf("error %v does not match ErrMisconfigured", err)
			}
			if took > time.Second {
				t.Errorf("Acquire took %v, over a second", took)
			}
			if s := fmt.Sprintf("%v %+v %#v", err, err, err); strings.Contains(s, wrong) || strings.Contains(s, right) {
				t.Errorf("the error shows a password: %s", s)
			}
		})
	}
}

func mustURL(t *testing.T, dsn string) *url.URL {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// A lease table dropped after the client checked it ends a waiting
// Acquire at once, with an error matching ErrMisconfigured: retrying
// cannot bring the table back.
func TestAcquire_droppedTableEndsAtOnce(t *testing.T) {
	dsn := server(t)
	table := freshTable(t, dsn)
	c := open(t, drivertest.WithParams(dsn, "distlock_table", table))
	ctx := drivertest.Context(t, 10*time.Second)
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := admin(t, dsn).Exec(ctx, "DROP TABLE "+pgx.Identifier{table}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := c.Acquire(ctx, "dropped")
	took := time.Since(start)
	t.Logf("Acquire took %v: %v", took, err)
	if !errors.Is(err, lock.ErrMisconfigured) {
		t.Errorf("error %v does not match ErrMisconfigured", err)
	}
	if took > time.Second {
		t.Errorf("Acquire took %v, over a second", took)
	}
}
