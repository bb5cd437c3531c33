package postgres_test

import (
	"slices"
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
)

// The test server runs with fsync and synchronous_commit off, for speed:
// the check warns of both and finds nothing else. A session that commits
// synchronously (the rule a role or a database can set) drops that one
// warning. The standby rules need a second server: see DESIGN.md.
func TestCheckSettings(t *testing.T) {
	dsn := server(t)
	for _, c := range []struct {
		name string
		dsn  string
		want []string
	}{
		{"test server", dsn, []string{"postgres-fsync", "postgres-synchronous-commit"}},
		{"synchronous commit", drivertest.WithParams(dsn, "options", "-c synchronous_commit=on"), []string{"postgres-fsync"}},
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
