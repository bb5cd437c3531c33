//go:build servers

package benchfaults

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock/cmd/distlock/internal/benchmark"
	"github.com/distlock/lock/internal/testenv"
)

// binary is the distlock command that TestMain builds.
var binary string

// TestMain builds the command (without -race: the test runs a few seconds
// of load per backend, and the benchmark package's own tests run the same
// code under -race), and runs the tests holding the Redis servers and the
// PostgreSQL server alone, since the test kills one Redis master and
// restarts PostgreSQL.
func TestMain(m *testing.M) {
	testenv.MainBuilding(m, &binary, "../..", nil, testenv.Redis, testenv.PostgresAlone)
}

// TestBenchFaults_goredisAndPostgres runs bench --faults on a Redlock
// driver and on PostgreSQL: one of 5 Redis masters killed, and the
// PostgreSQL server restarted. It checks the JSON's fault entries, and
// that every server killed runs again.
func TestBenchFaults_goredisAndPostgres(t *testing.T) {
	dir := testenv.Lookup(t, "DISTLOCK_SERVICES_DIR")
	redis := "redis://" + strings.Join(testenv.RedisAddrs(t), ",redis://")
	pg := testenv.PostgresDSN(t)
	files := map[string]benchmark.ServerFile{}
	for _, d := range []string{"goredis", "postgres"} {
		sf, err := benchmark.ReadServerFile(dir, d)
		if err != nil {
			t.Fatalf("%v: the test servers were started by an older scripts/services.sh; write the files with: scripts/services.sh faults", err)
		}
		files[d] = sf
	}
	out := filepath.Join(t.TempDir(), "bench.json")
	cmd := exec.Command(binary, "bench", "--driver", "goredis", "--dsn", redis, "--driver", "postgres", "--dsn", pg, "--duration", "250ms", "--no-hung",
		"--faults", "--servers-dir", dir, "--faults-before", "1s", "--faults-limit", "10s", "--json", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("bench took %v:\n%s", time.Since(start).Round(time.Millisecond), stdout.String())
	// Whatever bench did, the servers must run again.
	defer checkRunning(t, files)
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r benchmark.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Faults) != 2 || r.Faults[0].Driver != "goredis" || r.Faults[1].Driver != "postgres" {
		t.Fatalf("faults %+v, want goredis's and postgres's", r.Faults)
	}
	for _, fr := range r.Faults {
		if !fr.HasFault() || !fr.Restored || fr.Durability == "" || fr.Ops == 0 || len(fr.Successes) == 0 {
			t.Errorf("%s: %+v", fr.Driver, fr)
		}
		// A false refusal on keys of one's own: never on PostgreSQL. On
		// Redlock with a master down, a release that reached a quorum can
		// leave the key on a node it missed, and the next acquisition then
		// lacks a quorum (issue 32): seen once in make test, 1 in 2,500.
		// Logged, and bounded, there.
		switch held := fr.FailedBy["held"]; {
		case held == 0:
		case fr.Driver == "goredis" && held*100 <= fr.Ops:
			t.Logf("%s: %d of %d operations on keys of their own failed as held by another (issue 32)", fr.Driver, held, fr.Ops+fr.Failed)
		default:
			t.Errorf("%s: %d operations on keys of their own failed as held by another", fr.Driver, held)
		}
		if fr.RecoveryMS == nil {
			t.Errorf("%s: the rate did not come back within 10s", fr.Driver)
		}
	}
	redisFault, pgFault := r.Faults[0], r.Faults[1]
	if !strings.HasPrefix(redisFault.Summary, "killed redis-") || !strings.Contains(redisFault.Summary, "(1 of 5)") {
		t.Errorf("goredis's fault: %q", redisFault.Summary)
	}
	if pgFault.Summary != "restarted postgres" || pgFault.BackMS == nil {
		t.Errorf("postgres's fault: %q, back after %v", pgFault.Summary, pgFault.BackMS)
	}
}

// checkRunning checks that every server of files runs: the PID in its
// pidfile is alive, in its folder, and its port accepts connections.
func checkRunning(t *testing.T, files map[string]benchmark.ServerFile) {
	t.Helper()
	for d, sf := range files {
		for _, s := range sf.Servers {
			b, err := os.ReadFile(s.PIDFile)
			if err != nil {
				t.Errorf("%s: %s: %v", d, s.Name, err)
				continue
			}
			line, _, _ := strings.Cut(string(b), "\n")
			pid, _ := strconv.Atoi(strings.TrimSpace(line))
			if cwd, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd"); err != nil || cwd != s.Dir {
				t.Errorf("%s: %s (pid %d) does not run in %s: %v", d, s.Name, pid, s.Dir, err)
			}
			if c, err := net.DialTimeout("tcp", s.Addr, time.Second); err != nil {
				t.Errorf("%s: %s does not accept connections: %v", d, s.Name, err)
			} else {
				c.Close()
			}
		}
	}
}
