package etcd

import (
	"slices"
	"testing"

	"github.com/distlock/lock/drivertest"
)

// Each rule fires on the cluster that breaks it, and not on a safe one.
// Real servers break each rule in TestCheckSettings_brokenDeployments.
func TestClusterSettings_judge(t *testing.T) {
	for _, c := range []struct {
		name string
		s    clusterSettings
		want []string
	}{
		{"safe", clusterSettings{members: 3, versions: map[string]string{"a": "3.6.17", "b": "3.5.11"}}, nil},
		{"old", clusterSettings{members: 3, versions: map[string]string{"a": "3.5.10", "b": "3.6.0"}}, []string{"error etcd-version"}},
		{"3.4", clusterSettings{members: 5, versions: map[string]string{"a": "3.4.30"}}, []string{"error etcd-version"}},
		{"unreachable", clusterSettings{members: 3, versions: map[string]string{"a": ""}}, []string{"warning etcd-unreachable"}},
		{"one member", clusterSettings{members: 1, versions: map[string]string{"a": "3.6.17"}}, []string{"warning etcd-single-member"}},
		{"even", clusterSettings{members: 4, versions: map[string]string{"a": "3.6.17"}}, []string{"warning etcd-even-members"}},
	} {
		got := drivertest.Findings(t, c.s.judge())
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: findings %q, want %q", c.name, got, c.want)
		}
	}
}
