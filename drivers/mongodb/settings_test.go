package mongodb_test

import (
	"slices"
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
)

// FerretDB is a standalone server: the check says so, and nothing else
// (the driver's concerns are the safe defaults).
func TestCheckSettings(t *testing.T) {
	uri := server(t)
	fs, err := open(t, dsnFor(t, uri)).CheckSettings(drivertest.Context(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got := drivertest.Findings(t, fs)
	if want := []string{"warning mongodb-standalone"}; !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
}
