package etcd_test

import (
	"slices"
	"testing"
	"time"

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

// TestCheckSettings_brokenDeployments breaks the etcd rules that real
// test servers can: the auth test server is one member. (They have no
// etcd older than 3.5.11 and no even cluster: etcd-version and
// etcd-even-members are left to settings_internal_test.go.)
func TestCheckSettings_brokenDeployments(t *testing.T) {
	t.Run("one member", func(t *testing.T) {
		full := drivertest.WithParams(drivertest.Lookup(t, "DISTLOCK_ETCD_AUTH_DSN"), "prefix", "distlock-test/"+drivertest.RandomHex(4)+"/")
		fs, err := open(t, full).CheckSettings(drivertest.Context(t, 10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := drivertest.Findings(t, fs), []string{"warning etcd-single-member"}; !slices.Equal(got, want) {
			t.Errorf("findings %q, want %q", got, want)
		}
	})
}
