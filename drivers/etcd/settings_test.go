package etcd_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivertest"
)

// The test cluster (three members of a recent etcd) breaks no rule: it
// runs without fsync, which no client can see.
func TestCheckSettings(t *testing.T) {
	fs, err := open(t, dsn(t)).CheckSettings(drivertest.Context(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		t.Errorf("unexpected finding: %v", f)
	}
}

// TestCheckSettings_brokenDeployments breaks every etcd rule on real
// servers: the auth test server is one member; clusters of the test's own
// (started at once) are three members of Debian's etcd 3.4 and two of
// ours; and a DSN names a free port beside the test cluster's members.
func TestCheckSettings_brokenDeployments(t *testing.T) {
	drivertest.OwnServers(t)
	check := func(t *testing.T, full string, want []string) []driver.Finding {
		t.Helper()
		fs, err := open(t, full).CheckSettings(drivertest.Context(t, 10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if got := drivertest.Findings(t, fs); !slices.Equal(got, want) {
			t.Errorf("findings %q, want %q", got, want)
		}
		return fs
	}
	own := func(t *testing.T, urls []string) string {
		return "etcd://" + strings.Join(drivertest.Hosts(t, urls), ",") + "?" +
			drivertest.Query(append(timeouts.Params(), "prefix", "distlock-test/")...)
	}
	t.Run("one member", func(t *testing.T) {
		full := drivertest.WithParams(drivertest.Lookup(t, "DISTLOCK_ETCD_AUTH_DSN"), "prefix", "distlock-test/"+drivertest.RandomHex(4)+"/")
		check(t, full, []string{"warning etcd-single-member"})
	})
	t.Run("an endpoint down", func(t *testing.T) {
		down := drivertest.FreeAddr(t) // nothing listens there
		hosts := append(drivertest.Hosts(t, endpoints(t)), down)
		full := "etcd://" + strings.Join(hosts, ",") + "?" + drivertest.Query(append(timeouts.Params(), "prefix", "distlock-test/")...)
		fs := check(t, full, []string{"warning etcd-unreachable"})
		if len(fs) == 1 && !strings.HasSuffix(fs[0].Server, down) {
			t.Errorf("the finding names %q, want the endpoint %s", fs[0].Server, down)
		}
	})
	t.Run("etcd 3.4", func(t *testing.T) {
		t.Parallel()
		// One finding per member: each was asked.
		check(t, own(t, startCluster(t, debianEtcdBinary(t), 3)), slices.Repeat([]string{"error etcd-version"}, 3))
	})
	t.Run("two members", func(t *testing.T) {
		t.Parallel()
		check(t, own(t, startCluster(t, etcdBinary(t), 2)), []string{"warning etcd-even-members"})
	})
}
