package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock/internal/redistest"
	"github.com/distlock/lock/internal/testenv"
)

// The Redis case talks to every test server: it holds them exclusively,
// as the Redis drivers' fault tests do; PostgreSQL and MongoDB shared, so
// that no other package's fault tests restart them meanwhile.
func TestMain(m *testing.M) { testenv.Main(m, testenv.Redis, testenv.Postgres, testenv.MongoDB) }

// TestRun runs the example on each backend it names: a lock with a token
// and a holder that Inspect recognises, then three TTLs under Do, which
// extends the lease while another client is refused. FerretDB, our
// MongoDB, runs each request as a SQLite transaction: on a loaded machine
// an extension once took longer than a 300ms TTL leaves it, and Do lost
// the lock, so its TTL is a second.
func TestRun(t *testing.T) {
	for _, tc := range []struct {
		driver string
		dsn    func(t *testing.T) string
		ttl    time.Duration
	}{
		{"memory", func(*testing.T) string { return "swap-test" }, 300 * time.Millisecond},
		{"goredis", func(t *testing.T) string { return redistest.DSN(testenv.RedisAddrs(t), "fencing=true") }, 300 * time.Millisecond},
		{"postgres", func(t *testing.T) string { return testenv.PostgresDSN(t) }, 300 * time.Millisecond},
		{"mongodb", func(t *testing.T) string { return testenv.MongoDBURI(t) }, time.Second},
	} {
		t.Run(tc.driver, func(t *testing.T) {
			dsn := tc.dsn(t)
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var out bytes.Buffer
			if err := run(ctx, &out, tc.driver, dsn, tc.ttl); err != nil {
				t.Fatalf("run: %v\n%s", err, &out)
			}
			for _, want := range []string{
				"acquire: lock ", ", token 1,",
				"(this lock: true), token 1,",
				"release: ok\ninspect: nobody holds the key",
				"do: holding the key, token ",
				"another client's TryAcquire: lock: acquire", "held by another holder",
				"do: done and released; Do extended the lease",
			} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, &out)
				}
			}
		})
	}
}
