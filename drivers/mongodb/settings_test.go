package mongodb_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
)

// FerretDB is a standalone server: the check says so, and nothing else
// (the driver's concerns are the safe defaults).
func TestCheckSettings(t *testing.T) {
	uri := server(t)
	fs, err := open(t, dsnFor(t, uri)).CheckSettings(drivertest.Context(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got := drivertest.Findings(t, fs)
	if want := []string{"warning mongodb-standalone"}; !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
}

// The concern rules are judged on a replica set only, which this machine
// cannot run: a fake primary (fakeserver_test.go) stands in for one. A
// write concern of w=1 or j=false breaks mongodb-write-concern, a local
// read concern breaks mongodb-read-concern, and the driver's defaults
// (majority for both) are safe, on a replica set or behind a mongos, where
// mongodb-standalone does not fire either. The fake playing a standalone
// server shows that the check reads the deployment from its answers.
func TestCheckSettings_replicaSet(t *testing.T) {
	for _, c := range []struct {
		name   string
		kind   fakeDeployment
		params []string // of the DSN
		want   []string
	}{
		{"defaults", fakePrimary, nil, nil},
		{"mongos", fakeMongos, nil, nil},
		{"linearizable reads", fakePrimary, []string{"readConcernLevel", "linearizable"}, nil},
		{"w=1", fakePrimary, []string{"w", "1"}, []string{"warning mongodb-write-concern"}},
		{"j=false", fakePrimary, []string{"w", "majority", "journal", "false"}, []string{"warning mongodb-write-concern"}},
		{"j=false, the server's w", fakePrimary, []string{"journal", "false"}, []string{"warning mongodb-write-concern"}},
		{"local reads", fakePrimary, []string{"readConcernLevel", "local"}, []string{"warning mongodb-read-concern"}},
		{"standalone", fakeStandalone, []string{"w", "1"}, []string{"warning mongodb-standalone"}},
		{"w=1 and local reads", fakePrimary, []string{"w", "1", "readConcernLevel", "local"},
			[]string{"warning mongodb-write-concern", "warning mongodb-read-concern"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := startFakeServer(t, c.kind)
			dsn := drivertest.WithParams(s.uri(), c.params...)
			fs, err := open(t, dsn).CheckSettings(drivertest.Context(t, 10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if got := drivertest.Findings(t, fs); !slices.Equal(got, c.want) {
				t.Errorf("findings %q, want %q", got, c.want)
			}
			for _, f := range fs {
				if strings.Contains(f.Problem, "<nil>") { // a w left to the server once read "w=<nil>"
					t.Errorf("%s: the problem %q names a nil setting", f.Rule, f.Problem)
				}
			}
			if u := s.unknown(); len(u) > 0 {
				t.Errorf("the driver sent commands the fake does not know: %q", u)
			}
		})
	}
}
