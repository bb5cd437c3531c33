package zookeeper_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivertest"
	"github.com/distlock/lock/internal/netfault"
)

// The test ensemble (three members, whose session timeouts cover the
// default TTL) breaks no rule.
func TestCheckSettings(t *testing.T) {
	d, _ := dsn(t)
	fs, err := open(t, d).CheckSettings(drivertest.Context(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		t.Errorf("unexpected finding: %v", f)
	}
	if t.Failed() {
		t.Logf("the ensemble's config: see /zookeeper/config")
	}
}

// TestCheckSettings_distantMembers checks the settings through a dialer
// that delays every read and write by 10ms, as members a few milliseconds
// away would: the check's session of 1ms, which learns the shortest
// session, gets its connect response all the same.
func TestCheckSettings_distantMembers(t *testing.T) {
	d, _ := dsn(t)
	var nd netfault.Dialer
	nd.Slow(10 * time.Millisecond)
	c, err := lock.OpenDialer("zookeeper", d, nd.Dial)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fs, err := c.CheckSettings(drivertest.Context(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		t.Errorf("unexpected finding: %v", f)
	}
}

// roomy are the timeouts of the clients of the test's own ensembles: their
// JVMs start beside other packages' tests, and the first session of a
// young ensemble came after the test ensemble's 1.5s (make test, once).
// The ensembles' syncLimit (10s) and initLimit (30s) let a starved member
// keep up rather than drop out of the quorum.
var roomy = drivertest.Timeouts{Member: 2 * time.Second, Request: 6 * time.Second, TTL: 10 * time.Second}

// The check learns the shortest session an ensemble grants by asking for
// one of 1ms. Until the driver gave that session's handshake the member
// timeout (see stallConn.SetDeadline), go-zookeeper gave it 6.7ms, and this
// test failed in most make test runs; the ensembles' minSessionTimeout of
// 2s and the warm-up below date from then.
//
// TestCheckSettings_ownEnsembles breaks every ZooKeeper rule on
// ensembles of the test's own, started at once: one member standalone,
// which grants sessions of 5s at most (shorter than lock.DefaultTTL), and
// two members.
func TestCheckSettings_ownEnsembles(t *testing.T) {
	drivertest.OwnServers(t)
	for _, c := range []struct {
		name    string
		members int
		extra   string // zoo.cfg lines
		params  []string
		want    []string
	}{
		{"standalone", 1, "minSessionTimeout=2000\nmaxSessionTimeout=5000", []string{"session_timeout", "2s"},
			[]string{"warning zookeeper-single-member", "warning zookeeper-ttl-bounds"}},
		{"two members", 2, "minSessionTimeout=2000\nmaxSessionTimeout=3600000", nil, []string{"warning zookeeper-even-members"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			addrs := startEnsemble(t, c.members, c.extra)
			full := "zk://" + strings.Join(addrs, ",") + "/distlock-test?" +
				drivertest.Query(append(append(roomy.Params(), "dial_timeout", "20s"), c.params...)...)
			// Young JVMs, started beside make test's first compilations,
			// granted no session within 6s, three runs in a row: a first
			// session with a request timeout of 30s warms them up.
			warm := strings.Replace(full, "request_timeout="+roomy.Request.String(), "request_timeout=30s", 1)
			if err := open(t, warm).Ping(drivertest.Context(t, 40*time.Second)); err != nil {
				t.Fatalf("warming the ensemble up: %v", err)
			}
			fs, err := open(t, full).CheckSettings(drivertest.Context(t, 10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if got := drivertest.Findings(t, fs); !slices.Equal(got, c.want) {
				t.Errorf("findings %q, want %q", got, c.want)
			}
		})
	}
}
