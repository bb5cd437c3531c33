package drivertest_test

import (
	"testing"

	"github.com/distlock/lock/drivertest"
)

// TestQuery_laterPairWins checks that a test's parameter replaces the
// default of the same name.
func TestQuery_laterPairWins(t *testing.T) {
	got := drivertest.Query("a", "1", "b", "x y", "a", "2")
	if want := "a=2&b=x+y"; got != want {
		t.Errorf("Query = %q, want %q", got, want)
	}
}

// TestWithParams_appends checks the separator with and without a query.
func TestWithParams_appends(t *testing.T) {
	for _, tc := range []struct{ dsn, want string }{
		{"pg://h/db", "pg://h/db?k=v+w&n=1"},
		{"pg://h/db?x=0", "pg://h/db?x=0&k=v+w&n=1"},
	} {
		if got := drivertest.WithParams(tc.dsn, "k", "v w", "n", "1"); got != tc.want {
			t.Errorf("WithParams(%q) = %q, want %q", tc.dsn, got, tc.want)
		}
	}
}

// TestHosts_ofURLs checks that Hosts keeps host and port.
func TestHosts_ofURLs(t *testing.T) {
	got := drivertest.Hosts(t, []string{"http://127.0.0.1:2379", "https://h:1"})
	if len(got) != 2 || got[0] != "127.0.0.1:2379" || got[1] != "h:1" {
		t.Errorf("Hosts = %q", got)
	}
}
