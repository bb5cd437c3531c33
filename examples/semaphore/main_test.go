package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.Postgres) }

// TestRun runs the pool on each backend it names: every call is served,
// none refused, never more than 3 in flight.
func TestRun(t *testing.T) {
	for _, tc := range []struct {
		driver string
		dsn    func(t *testing.T) string
	}{
		{"memory", func(*testing.T) string { return "semaphore-test" }},
		{"postgres", func(t *testing.T) string { return testenv.PostgresDSN(t) }},
	} {
		t.Run(tc.driver, func(t *testing.T) {
			dsn := tc.dsn(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var out bytes.Buffer
			if err := run(ctx, &out, tc.driver, dsn, 6, 3); err != nil {
				t.Fatalf("run: %v\n%s", err, &out)
			}
			if got := out.String(); !strings.HasPrefix(got, "18 calls served, 0 refused, at most ") || strings.Contains(got, "at most 4") {
				t.Errorf("output %q; want 18 calls served, 0 refused, at most 3 in flight", got)
			}
		})
	}
}
