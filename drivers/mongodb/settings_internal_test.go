package mongodb

import (
	"slices"
	"testing"

	"github.com/distlock/lock/drivertest"
)

// Each rule fires on the deployment that breaks it, and not on a safe
// one. FerretDB is never a replica set: TestCheckSettings_replicaSet holds
// the concerns' rules against a fake primary.
func TestDeploymentSettings_judge(t *testing.T) {
	safe := deploymentSettings{replicaSet: true, w: "majority", journal: true, readConcern: "majority"}
	for _, c := range []struct {
		name string
		s    deploymentSettings
		want []string
	}{
		{"safe", safe, nil},
		{"linearizable", deploymentSettings{replicaSet: true, w: "majority", journal: true, readConcern: "linearizable"}, nil},
		{"sharded", deploymentSettings{sharded: true, w: "majority", journal: true, readConcern: "majority"}, nil},
		{"standalone", deploymentSettings{w: "majority", journal: true, readConcern: "majority"}, []string{"warning mongodb-standalone"}},
		{"w=1", deploymentSettings{replicaSet: true, w: "1", journal: true, readConcern: "majority"}, []string{"warning mongodb-write-concern"}},
		{"j=false", deploymentSettings{replicaSet: true, w: "majority", readConcern: "majority"}, []string{"warning mongodb-write-concern"}},
		{"server's default w", deploymentSettings{replicaSet: true, journal: true, readConcern: "majority"}, []string{"warning mongodb-write-concern"}},
		{"local reads", deploymentSettings{replicaSet: true, w: "majority", journal: true, readConcern: "local"}, []string{"warning mongodb-read-concern"}},
		{"server's default reads", deploymentSettings{replicaSet: true, w: "majority", journal: true}, []string{"warning mongodb-read-concern"}},
	} {
		got := drivertest.Findings(t, c.s.judge())
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: findings %q, want %q", c.name, got, c.want)
		}
	}
}
