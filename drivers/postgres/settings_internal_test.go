package postgres

import (
	"slices"
	"testing"

	"github.com/distlock/lock/drivertest"
)

// Each rule fires on the setting that breaks it, and not on a safe one:
// the test server shows only some of them (see TestCheckSettings).
func TestServerSettings_judge(t *testing.T) {
	safe := serverSettings{syncCommit: "on", fsync: "on"}
	for _, c := range []struct {
		name string
		s    serverSettings
		want []string
	}{
		{"safe", safe, nil},
		{"remote_apply", serverSettings{syncCommit: "remote_apply", fsync: "on"}, nil},
		{"fsync off", serverSettings{syncCommit: "on", fsync: "off"}, []string{"warning postgres-fsync"}},
		{"synchronous_commit off", serverSettings{syncCommit: "off", fsync: "on"}, []string{"warning postgres-synchronous-commit"}},
		{"async standbys", serverSettings{syncCommit: "on", fsync: "on", async: 2}, []string{"warning postgres-async-standby"}},
		{"standbys unreadable", serverSettings{syncCommit: "on", fsync: "on", unknown: 1}, []string{"warning postgres-standbys-unreadable"}},
	} {
		got := drivertest.Findings(t, c.s.judge())
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: findings %q, want %q", c.name, got, c.want)
		}
	}
}
