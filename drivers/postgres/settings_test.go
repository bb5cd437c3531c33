package postgres_test

import (
	"slices"
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
)

// The test server runs with fsync and synchronous_commit off, for speed.
// The driver raises synchronous_commit on its own pools, so the check
// warns of fsync only; a DSN that asks for synchronous_commit=off gets
// that warning too. TestCheckSettings_ownServer holds the rest on a server
// of the test's own.
func TestCheckSettings(t *testing.T) {
	dsn := server(t)
	for _, c := range []struct {
		name string
		dsn  string
		want []string
	}{
		{"test server", dsn, []string{"warning postgres-fsync"}},
		{"asynchronous commit", drivertest.WithParams(dsn, "synchronous_commit", "off"), []string{"warning postgres-fsync", "warning postgres-synchronous-commit"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs, err := open(t, c.dsn).CheckSettings(ctxFor(t, 10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if got := drivertest.Findings(t, fs); !slices.Equal(got, c.want) {
				t.Errorf("findings %q, want %q", got, c.want)
			}
		})
	}
}
