package zookeeper

import (
	"slices"
	"testing"

	"github.com/distlock/lock/drivertest"
	"time"
)

// Each rule fires on the ensemble that breaks it, and not on a safe one.
func TestEnsembleSettings_judge(t *testing.T) {
	const def = 15 * time.Second
	for _, c := range []struct {
		name string
		s    ensembleSettings
		want []string
	}{
		{"safe", ensembleSettings{members: 3, minTTL: 4 * time.Second, maxTTL: 40 * time.Second, defaultTTL: def}, nil},
		{"config unread", ensembleSettings{members: -1, minTTL: 4 * time.Second, maxTTL: 40 * time.Second, defaultTTL: def}, nil},
		{"bounds unknown", ensembleSettings{members: 5, defaultTTL: def}, nil},
		{"one member", ensembleSettings{members: 1, minTTL: time.Second, maxTTL: time.Minute, defaultTTL: def}, []string{"warning zookeeper-single-member"}},
		{"even", ensembleSettings{members: 4, minTTL: time.Second, maxTTL: time.Minute, defaultTTL: def}, []string{"warning zookeeper-even-members"}},
		{"default TTL too long", ensembleSettings{members: 3, minTTL: 4 * time.Second, maxTTL: 10 * time.Second, defaultTTL: def}, []string{"warning zookeeper-ttl-bounds"}},
		{"default TTL too short", ensembleSettings{members: 3, minTTL: 20 * time.Second, maxTTL: time.Minute, defaultTTL: def}, []string{"warning zookeeper-ttl-bounds"}},
	} {
		got := drivertest.Findings(t, c.s.judge())
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: findings %q, want %q", c.name, got, c.want)
		}
	}
}
