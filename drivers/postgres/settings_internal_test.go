package postgres

import (
	"slices"
	"testing"
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
		{"fsync off", serverSettings{syncCommit: "on", fsync: "off"}, []string{"postgres-fsync"}},
		{"synchronous_commit off", serverSettings{syncCommit: "off", fsync: "on"}, []string{"postgres-synchronous-commit"}},
		{"async standbys", serverSettings{syncCommit: "on", fsync: "on", async: 2}, []string{"postgres-async-standby"}},
		{"standbys unreadable", serverSettings{syncCommit: "on", fsync: "on", unknown: 1}, []string{"postgres-standbys-unreadable"}},
	} {
		var got []string
		for _, f := range c.s.judge() {
			got = append(got, f.Rule)
			if f.Problem == "" || f.Fix == "" {
				t.Errorf("%s: %v says not what goes wrong or what to change", c.name, f)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: rules %q, want %q", c.name, got, c.want)
		}
	}
}
