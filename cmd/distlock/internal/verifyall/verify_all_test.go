//go:build servers

package verifyall

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock/internal/testenv"
)

// binary is the distlock command that TestMain builds.
var binary string

// TestMain builds the command (without -race: the workers' code is the
// engine's, which conformance's tests and the command's run under -race),
// and runs the tests. It takes no lock: each case takes its own.
func TestMain(m *testing.M) { testenv.MainBuilding(m, &binary, "../..", nil) }

// verifyRun is the part of 'distlock verify --json' that the test reads.
type verifyRun struct {
	OK       bool `json:"ok"`
	Findings []struct {
		Severity string `json:"severity"`
		Rule     string `json:"rule"`
	} `json:"findings"`
	Run struct {
		Namespace    string         `json:"namespace"`
		Dropped      bool           `json:"dropped"`
		NetFaults    bool           `json:"net_faults"`
		Faults       map[string]int `json:"faults"`
		Holdings     int            `json:"holdings"`
		Overlaps     int            `json:"overlaps"`
		Regressions  int            `json:"token_regressions"`
		LostWrites   int            `json:"lost_writes"`
		Expired      int            `json:"returned_expired"`
		LeftAfterTTL int            `json:"left_after_ttl"`
		WorkerErrors []string       `json:"worker_errors"`
	} `json:"run"`
}

// TestVerify_everyNetworkedDriver runs a short 'distlock verify' on each
// networked driver the command's own tests leave out: it passes with the
// test servers' expected warnings only (they run without fsync on
// purpose), its workers hold the keys in turn with no overlap, regression
// or lost write, and its scratch namespace is dropped.
func TestVerify_everyNetworkedDriver(t *testing.T) {
	redis := "redis://" + strings.Join(testenv.RedisAddrs(t), ",redis://")
	valkey := "redis://" + strings.Join(testenv.ValkeyAddrs(t), ",redis://")
	var etcd []string
	for _, e := range testenv.EtcdEndpoints(t) {
		etcd = append(etcd, strings.TrimPrefix(e, "http://"))
	}
	for _, c := range []struct {
		driver, dsn string
		servers     testenv.Servers // taken shared: verify breaks nothing
	}{
		{"redigo", redis + "?fencing=true", testenv.Lock("redis", false)},
		{"rueidis", valkey + "?fencing=true", testenv.Lock("valkey", false)},
		{"valkey", valkey, testenv.Lock("valkey", false)},
		{"mysql", testenv.Lookup(t, "DISTLOCK_MYSQL_DSN"), testenv.Lock("mysql", false)},
		{"mongodb", testenv.MongoDBURI(t), testenv.MongoDB},
		{"etcd", "etcd://" + strings.Join(etcd, ","), testenv.Lock("etcd", false)},
		{"zookeeper", "zk://" + strings.Join(testenv.ZooKeeperServers(t), ","), testenv.Lock("zookeeper", false)},
		{"nats", testenv.Lookup(t, "DISTLOCK_NATS_DSN"), testenv.Lock("nats", false)},
	} {
		t.Run(c.driver, func(t *testing.T) {
			release, err := testenv.Hold(c.servers)
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(binary, "verify", "--driver", c.driver, "--dsn", c.dsn,
				"--duration", "3s", "--ttl", "500ms", "--json")
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			err = cmd.Run()
			var out verifyRun
			if jerr := json.Unmarshal(stdout.Bytes(), &out); jerr != nil {
				t.Fatalf("verify: %v, and its output is not JSON (%v): %s\nstderr: %s", err, jerr, stdout.String(), stderr.String())
			}
			t.Logf("%s in %v: %d holdings, namespace %s dropped %v", c.driver, time.Since(start).Round(time.Millisecond),
				out.Run.Holdings, out.Run.Namespace, out.Run.Dropped)
			r := out.Run
			if err != nil || !out.OK || r.Holdings == 0 || r.Overlaps+r.Regressions+r.LostWrites+r.Expired+r.LeftAfterTTL != 0 {
				t.Errorf("verify: %v; %s\nstderr: %s", err, stdout.String(), stderr.String())
			}
			for _, f := range out.Findings {
				if f.Severity != "warning" {
					t.Errorf("a finding of severity %s on the test servers: %s", f.Severity, f.Rule)
				}
			}
			// The first faults are dealt at once, the pause last: a run of
			// 3s with a TTL of 500ms sees at least two kinds.
			if net := r.Faults["reset-connections"] + r.Faults["slow-connections"]; !r.NetFaults || net == 0 {
				t.Errorf("connection faults: the driver dials through verify's dialer: %v; faults dealt: %v", r.NetFaults, r.Faults)
			}
			if !r.Dropped {
				t.Errorf("its scratch namespace %s was not dropped", r.Namespace)
			}
		})
	}
}
