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
// as the Redis drivers' fault tests do.
func TestMain(m *testing.M) { testenv.Main(m, testenv.Redis, testenv.Postgres) }

// TestRun runs the example's scenario on each backend it names: the stale
// write lands without the guard and is refused (409) with it.
func TestRun(t *testing.T) {
	for _, tc := range []struct {
		driver string
		dsn    func(t *testing.T) string
	}{
		{"memory", func(*testing.T) string { return "example-test" }},
		{"goredis", func(t *testing.T) string { return redistest.DSN(testenv.RedisAddrs(t), "fencing=true") }},
		{"postgres", func(t *testing.T) string { return testenv.PostgresDSN(t) }},
	} {
		t.Run(tc.driver, func(t *testing.T) {
			dsn := tc.dsn(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var out bytes.Buffer
			if err := run(ctx, &out, tc.driver, dsn, 500*time.Millisecond); err != nil {
				t.Fatalf("run: %v\n%s", err, &out)
			}
			for _, want := range []string{"the stale write landed over client 2's", "409 Conflict", "the stale write was refused"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, &out)
				}
			}
		})
	}
}
