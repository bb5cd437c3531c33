package mongodb

import (
	"slices"
	"testing"
)

// Each rule fires on the deployment that breaks it, and not on a safe
// one. FerretDB is never a replica set: the concerns' rules are held here
// only.
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
		{"standalone", deploymentSettings{w: "majority", journal: true, readConcern: "majority"}, []string{"mongodb-standalone"}},
		{"w=1", deploymentSettings{replicaSet: true, w: "1", journal: true, readConcern: "majority"}, []string{"mongodb-write-concern"}},
		{"j=false", deploymentSettings{replicaSet: true, w: "majority", readConcern: "majority"}, []string{"mongodb-write-concern"}},
		{"local reads", deploymentSettings{replicaSet: true, w: "majority", journal: true, readConcern: "local"}, []string{"mongodb-read-concern"}},
		{"server's default reads", deploymentSettings{replicaSet: true, w: "majority", journal: true}, []string{"mongodb-read-concern"}},
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
