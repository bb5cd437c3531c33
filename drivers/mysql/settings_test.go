package mysql_test

import (
	"slices"
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
)

// The test server flushes its log once a second and keeps no binary log,
// for speed: the check warns of the first and of nothing else.
func TestCheckSettings(t *testing.T) {
	fs, err := open(t, withTable(t, server(t))).CheckSettings(drivertest.Context(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got := drivertest.Findings(t, fs)
	if want := []string{"warning mysql-flush-log"}; !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
}
