package drivertest

import (
	"log"
	"os"
	"path/filepath"
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

// ServicesScript returns the path of scripts/services.sh, found in the
// nearest folder above the test's own that holds it, for a test that
// starts a server it killed (services.sh start-redis, start-ferretdb). It
// fails the test if there is none. A driver of a module of its own has its
// go.mod in its folder: the repository's root is further up.
func ServicesScript(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		script := filepath.Join(dir, "scripts", "services.sh")
		if _, err := os.Stat(script); err == nil {
			return script
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no scripts/services.sh above the test's folder")
		}
		dir = parent
	}
}

// OwnServers makes t the only test on the machine that starts servers of
// its own (a PostgreSQL with standbys, ZooKeeper or etcd ensembles, a
// MariaDB) until it ends. Such a start costs seconds of both cores; many
// at once starve every other package's timeouts, and make test runs the
// drivers' packages side by side.
func OwnServers(t testing.TB) {
	t.Helper()
	release, err := testenv.Hold(testenv.Lock("own-servers", true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
}
