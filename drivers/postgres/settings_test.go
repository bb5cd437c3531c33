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
// that warning too. The standby rules need a second server: see DESIGN.md.
func TestCheckSettings(t *testing.T) {
	dsn := server(t)
	for _, c := range []struct {
		name string
		dsn  string
		want []string
	}{
		{"test server", dsn, []string{"postgres-fsync"}},
		{"asynchronous commit", drivertest.WithParams(dsn, "synchronous_commit", "off"), []string{"postgres-fsync", "postgres-synchronous-commit"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs, err := open(t, c.dsn).CheckSettings(ctxFor(t, 10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range fs {
				t.Log(f)
				if f.Severity.String() != "warning" || f.Problem == "" || f.Fix == "" {
					t.Errorf("finding %v: want a warning that says what goes wrong and what to change", f)
				}
				got = append(got, f.Rule)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("rules %q, want %q", got, c.want)
			}
		})
	}
}
