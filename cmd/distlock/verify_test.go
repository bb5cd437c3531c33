package main

import (
	"encoding/json"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/distlock/lock"
	"github.com/distlock/lock/internal/redistest"
	"github.com/distlock/lock/internal/testenv"
)

// A driver without a settings check is an error (69) that says so.
func TestVerify_driverWithoutSettingsCheck(t *testing.T) {
	r := cliResult(t, "verify", "--lint-only", "--driver", "memory", "--dsn", "verify-test")
	if r.code != exitBackend || r.stdout != "" || !strings.Contains(r.stderr, "no settings check") {
		t.Errorf("verify on the memory driver: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// On the test servers verify passes (0) with the expected warnings only,
// one a node: they run without persistence. Given one server twice, by two
// addresses, it fails (1) and names the rule.
func TestVerify_lintOnRedis(t *testing.T) {
	addrs := testenv.RedisAddrs(t)
	r := cliResult(t, "verify", "--lint-only", "--json", "--driver", "goredis", "--dsn", redistest.DSN(addrs, ""))
	r.want(t, exitOK)
	var fs []findingJSON
	if err := json.Unmarshal([]byte(r.stdout), &fs); err != nil {
		t.Fatalf("verify --json printed %q: %v", r.stdout, err)
	}
	if len(fs) != len(addrs) {
		t.Errorf("%d findings, want %d (one warning a node): %+v", len(fs), len(addrs), fs)
	}
	for _, f := range fs {
		if f.Severity != "warning" || f.Rule != "redis-persistence" || f.Server == "" || f.Fix == "" {
			t.Errorf("unexpected finding %+v", f)
		}
	}

	_, port, _ := net.SplitHostPort(addrs[0])
	r = cliResult(t, "verify", "--lint-only", "--driver", "goredis", "--dsn", redistest.DSN([]string{addrs[0], addrs[1], "localhost:" + port}, ""))
	r.want(t, exitUnsafe)
	if !strings.Contains(r.stdout, "error    redis-same-server") || !strings.Contains(r.stdout, "1 error, 3 warnings") {
		t.Errorf("verify on one server given twice printed:\n%s", r.stdout)
	}
}

// verifyExpected are the findings of verify --lint-only on the test
// servers that TestMain holds, by driver: "severity rule" of each, in
// order. The servers run without persistence or fsync, on purpose, for
// speed.
var verifyExpected = map[string][]string{
	"goredis":  slices.Repeat([]string{"warning redis-persistence"}, 5),
	"redigo":   slices.Repeat([]string{"warning redis-persistence"}, 5),
	"rueidis":  slices.Repeat([]string{"warning redis-persistence"}, 5),
	"valkey":   slices.Repeat([]string{"warning redis-persistence"}, 5),
	"postgres": {"warning postgres-fsync"},
	"mongodb":  {"warning mongodb-standalone"},
}

// verifyElsewhere are the drivers whose servers other packages' fault
// tests kill and hang while this package runs, and which this package
// does not hold (it would wait minutes for them, a slot of go test's
// each): the settings check of each is tested, with the same
// expectations, by TestCheckSettings in its own package, under its lock.
var verifyElsewhere = map[string]string{
	"etcd":      "drivers/etcd: no finding",
	"mysql":     "drivers/mysql: warning mysql-flush-log",
	"nats":      "drivers/nats: no finding",
	"zookeeper": "drivers/zookeeper: no finding",
}

// verify --lint-only passes on every networked driver against the test
// servers, with the expected warnings only: here for the drivers whose
// servers TestMain holds, and in their own packages for the others. A
// driver added to the command must be listed in one of the two.
func TestVerify_lintEveryDriver(t *testing.T) {
	testenv.RedisAddrs(t) // skips the test without the servers
	for _, d := range lock.Drivers() {
		if d == "memory" || strings.HasPrefix(d, "cmd-distlock-test") {
			continue // no two processes share memory's store; the rest are this package's test doubles
		}
		t.Run(d, func(t *testing.T) {
			want, ok := verifyExpected[d]
			if !ok {
				if _, ok := verifyElsewhere[d]; ok {
					t.Skipf("tested in its own package: %s", verifyElsewhere[d])
				}
				t.Fatalf("no expected findings for driver %s: add them to verifyExpected or verifyElsewhere", d)
			}
			dsn, _ := benchNamespaced(d, testServerDSN(t, d), "verify_test")
			r := cliResult(t, "verify", "--lint-only", "--json", "--driver", d, "--dsn", dsn)
			r.want(t, exitOK)
			var fs []findingJSON
			if err := json.Unmarshal([]byte(r.stdout), &fs); err != nil {
				t.Fatalf("verify --json printed %q: %v", r.stdout, err)
			}
			var got []string
			for _, f := range fs {
				got = append(got, f.Severity+" "+f.Rule)
			}
			if !slices.Equal(got, want) {
				t.Errorf("findings %q, want %q", got, want)
			}
		})
	}
}
