package drivertest

import (
	"log"
	"os"
	"strings"
	"testing"

	"github.com/distlock/lock/internal/testenv"
)

// Lookup returns the value of the environment variable name, which
// scripts/services.sh env sets for a test server. Without it the test is
// skipped with a message saying how to start the servers; under CI (the
// CI variable is set), it fails instead.
func Lookup(t testing.TB, name string) string {
	t.Helper()
	return testenv.Lookup(t, name)
}

// List is [Lookup] for a comma-separated list, such as a cluster's
// members.
func List(t testing.TB, name string) []string {
	t.Helper()
	return strings.Split(Lookup(t, name), ",")
}

// ServicesDir returns the folder where scripts/services.sh keeps the test
// servers' data and PID files, from DISTLOCK_SERVICES_DIR, as [Lookup]
// does.
func ServicesDir(t testing.TB) string {
	t.Helper()
	return Lookup(t, "DISTLOCK_SERVICES_DIR")
}

// ExampleServer returns the value of the environment variable name for a
// runnable example, which has no testing.T. Without it the example stops
// with a message saying how to set it.
func ExampleServer(name string) string {
	v := os.Getenv(name)
	if v == "" {
		log.Fatalf("%s is not set: eval \"$(scripts/services.sh env)\"", name)
	}
	return v
}
