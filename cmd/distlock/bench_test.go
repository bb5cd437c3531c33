package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/distlock/lock"
	"github.com/distlock/lock/internal/redistest"
	"github.com/distlock/lock/internal/testenv"
)

// benchRun is what one run of 'distlock bench' did.
type benchRun struct {
	stdout, stderr string
	code           int
}

// benchResult runs 'distlock bench args' in the test's process.
func benchResult(t *testing.T, args ...string) benchRun {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli(t.Context(), append([]string{"bench"}, args...), &stdout, &stderr)
	return benchRun{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// wantCode fails the test unless r ended with code, naming what it printed.
func (r benchRun) wantCode(t *testing.T, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstdout: %s\nstderr: %s", r.code, code, r.stdout, r.stderr)
	}
}

// unreachable are --dsn flags for every server driver, on a port where
// nothing listens.
var unreachable = []string{
	"--dsn-goredis", "redis://127.0.0.1:1", "--dsn-redigo", "redis://127.0.0.1:1",
	"--dsn-rueidis", "redis://127.0.0.1:1", "--dsn-valkey", "redis://127.0.0.1:1",
	"--dsn-postgres", "postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=1",
	"--dsn-mongodb", "mongodb://127.0.0.1:1/?connectTimeoutMS=500",
	"--dsn-mysql", "u@tcp(127.0.0.1:1)/x?timeout=500ms",
	"--dsn-etcd", "etcd://127.0.0.1:1?dial_timeout=500ms",
	"--dsn-zookeeper", "zk://127.0.0.1:1?dial_timeout=500ms",
}

func TestBench_memoryTableJSONAndSVG(t *testing.T) {
	dir := t.TempDir()
	jsonPath, svgPath := filepath.Join(dir, "bench.json"), filepath.Join(dir, "bench.svg")
	r := benchResult(t, "--drivers", "memory", "--duration", "200ms", "--json", jsonPath, "--svg", svgPath)
	r.wantCode(t, exitOK)
	for _, want := range []string{"p50 µs", "handoffs/s", "\nmemory ", "200ms per measurement"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, want := range []string{"bench: [1/4] memory: uncontended (200ms)", "bench: [4/4] memory: handoffs, 8 clients", "wrote " + svgPath} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	var report struct {
		Machine struct{ Go string }
		Drivers []struct {
			Driver      string
			Uncontended struct{ Ops int64 }
		}
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &report); err != nil || report.Machine.Go == "" || len(report.Drivers) != 1 ||
		report.Drivers[0].Driver != "memory" || report.Drivers[0].Uncontended.Ops == 0 {
		t.Errorf("JSON %v: %s", err, b)
	}
	if b, err := os.ReadFile(svgPath); err != nil || !bytes.HasPrefix(b, []byte("<svg ")) || !bytes.Contains(b, []byte("memory")) {
		t.Errorf("SVG %v: %.200s", err, b)
	}
}

func TestBench_unreachableServersSkipped(t *testing.T) {
	for _, d := range benchDrivers() {
		if !slices.ContainsFunc(benchDefaults, func(row benchDefault) bool { return row.driver == d }) {
			t.Setenv(benchEnvDSN(d), "") // no DSN: skipped as well
		}
	}
	r := benchResult(t, append([]string{"--duration", "50ms"}, unreachable...)...)
	r.wantCode(t, exitOK) // by default, a server that is down is no error: memory is measured
	wants := []string{"\nmemory ", "scripts/services.sh up"}
	for _, d := range benchDrivers()[1:] {
		wants = append(wants, "skipped "+d+": ")
	}
	for _, want := range wants {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	named := benchResult(t, append([]string{"--drivers", "memory,postgres", "--duration", "50ms"}, unreachable...)...)
	named.wantCode(t, exitBackend) // a driver asked for by name must be measured
	if !strings.Contains(named.stdout, "skipped postgres: ") || strings.Contains(named.stdout, "goredis") {
		t.Errorf("stdout:\n%s", named.stdout)
	}
}

func TestBench_badUsageExits64WithOneLine(t *testing.T) {
	for name, args := range map[string][]string{
		"unknownDriver":   {"--drivers", "memory,nosuch"},
		"noDriver":        {"--drivers", ","},
		"shortDuration":   {"--duration", "1ms"},
		"badDuration":     {"--duration", "soon"},
		"argument":        {"memory"},
		"unknownFlag":     {"--frobnicate"},
		"standardPort":    {"--hung-port", "6379"},
		"standardInRange": {"--hung-port", "6377"},
		"jsonInNoSuchDir": {"--drivers", "memory", "--json", filepath.Join(t.TempDir(), "no", "such", "x.json")},
	} {
		t.Run(name, func(t *testing.T) {
			r := benchResult(t, args...)
			r.wantCode(t, exitUsage)
			if r.stdout != "" || !strings.HasPrefix(r.stderr, "distlock: bench: ") || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("stdout %q, stderr %q: want one line on stderr", r.stdout, r.stderr)
			}
		})
	}
}

func TestBench_helpPrintsFlagsAndExamples(t *testing.T) {
	r := benchResult(t, "--help")
	r.wantCode(t, exitOK)
	for _, want := range []string{"Usage: distlock bench", "--drivers", "--duration", "--json", "--svg", "--dsn-goredis", "--dsn-mongodb",
		"$DISTLOCK_REDIS_ADDRS", "$DISTLOCK_POSTGRES_DSN", "$DISTLOCK_MONGODB_URI", "--no-hung", "Examples:\n  distlock bench"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestBenchDefaultDSN_environmentOrTestServers(t *testing.T) {
	env := map[string]string{
		"DISTLOCK_REDIS_ADDRS":  "10.0.0.1:7001,10.0.0.2:7001",
		"DISTLOCK_POSTGRES_DSN": "postgres://u@db:15432/x?sslmode=disable",
		"DISTLOCK_MONGODB_URI":  "mongodb://m:27017",
	}
	none := func(string) string { return "" }
	for _, c := range []struct {
		driver      string
		getenv      func(string) string
		want        string
		noStandards bool
	}{
		{"goredis", none, "redis://127.0.0.1:7001,redis://127.0.0.1:7002,redis://127.0.0.1:7003,redis://127.0.0.1:7004,redis://127.0.0.1:7005", true},
		{"redigo", func(k string) string { return env[k] }, "redis://10.0.0.1:7001,redis://10.0.0.2:7001", false},
		{"postgres", none, "postgres://postgres@127.0.0.1:15432/distlock?sslmode=disable&distlock_table=distlock_bench_leases", true},
		{"postgres", func(k string) string { return env[k] }, "postgres://u@db:15432/x?sslmode=disable&distlock_table=distlock_bench_leases", false},
		{"mongodb", none, "mongodb://127.0.0.1:27117/?distlock_database=distlock_bench&distlock_collection=grants_r1", true},
		{"mongodb", func(k string) string { return env[k] }, "mongodb://m:27017/?distlock_database=distlock_bench&distlock_collection=grants_r1", false},
		{"memory", none, benchMemoryStore, false},
	} {
		got := benchDefaultDSN(c.driver, c.getenv, "r1")
		if got != c.want {
			t.Errorf("benchDefaultDSN(%s) = %q, want %q", c.driver, got, c.want)
		}
		if c.noStandards && (strings.Contains(got, ":6379") || strings.Contains(got, ":5432/")) {
			t.Errorf("benchDefaultDSN(%s) = %q: a standard port", c.driver, got)
		}
	}
}

func TestBenchDrivers_everyRegisteredDriverAfterTheRows(t *testing.T) {
	got := benchDrivers()
	for i, row := range benchDefaults {
		if got[i] != row.driver {
			t.Fatalf("benchDrivers() = %v: want the rows of benchDefaults first", got)
		}
	}
	for _, d := range lock.Drivers() {
		if !slices.Contains(got, d) {
			t.Errorf("benchDrivers() = %v lacks the registered driver %q", got, d)
		}
	}
	if len(got) != len(lock.Drivers()) {
		t.Errorf("benchDrivers() = %v, registered %v: a row names a driver the command does not import", got, lock.Drivers())
	}
}

func TestBenchDefaultDSN_driverWithoutARowTakesItsVariable(t *testing.T) {
	env := map[string]string{"DISTLOCK_NEWDB_DSN": "u@tcp(127.0.0.1:1)/x"}
	if got := benchDefaultDSN("newdb", func(k string) string { return env[k] }, "r1"); got != env["DISTLOCK_NEWDB_DSN"] {
		t.Errorf("benchDefaultDSN(newdb) = %q, want $DISTLOCK_NEWDB_DSN", got)
	}
	bf := &benchFlags{drivers: []string{"newdb"}, dsn: map[string]string{}, noHung: true}
	plan := benchPlan(bf)
	if len(plan.Targets) != 1 || !strings.Contains(plan.Targets[0].Skip, "--dsn-newdb") || !strings.Contains(plan.Targets[0].Skip, "$DISTLOCK_NEWDB_DSN") {
		t.Errorf("a driver without a DSN: targets %+v, want it skipped, naming the flag and the variable", plan.Targets)
	}
	if !strings.Contains(benchUsage, "--dsn-") {
		t.Errorf("usage lacks the --dsn flags:\n%s", benchUsage)
	}
}

func TestBenchWithParams_urlsAndKeywords(t *testing.T) {
	for dsn, want := range map[string]string{
		"postgres://h/db":                       "postgres://h/db?a=1&b=2",
		"postgres://h/db?sslmode=disable":       "postgres://h/db?sslmode=disable&a=1&b=2",
		"mongodb://h:27017":                     "mongodb://h:27017/?a=1&b=2",
		"host=h dbname=db":                      "host=h dbname=db a=1 b=2",
		"postgres://h/db?a=mine":                "postgres://h/db?a=mine",
		"mongodb://h:27017/?a=mine&replicaSet=": "mongodb://h:27017/?a=mine&replicaSet=",
	} {
		if got := benchWithParams(dsn, "a=1&b=2"); got != want {
			t.Errorf("benchWithParams(%q) = %q, want %q", dsn, got, want)
		}
	}
}

// TestBench_postgresAndGoredis runs bench on the test servers briefly.
func TestBench_postgresAndGoredis(t *testing.T) {
	r := benchResult(t, "--drivers", "goredis,postgres", "--duration", "200ms", "--no-hung",
		"--dsn-goredis", redistest.DSN(testenv.RedisAddrs(t), ""), "--dsn-postgres", testenv.PostgresDSN(t))
	r.wantCode(t, exitOK) // every measurement has figures (an operation may fail on a loaded machine)
	for _, want := range []string{"\ngoredis N=5 ", "\npostgres ", "2 of 5 nodes hung: skipped: --no-hung."} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestBench_mongodbLeavesNoCollection: the run's own collection of grants
// is dropped when bench ends.
func TestBench_mongodbLeavesNoCollection(t *testing.T) {
	uri := testenv.MongoDBURI(t)
	collections := func() []string {
		c, err := mongo.Connect(options.Client().ApplyURI(uri))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Disconnect(context.Background())
		names, err := c.Database(benchMongoDatabase).ListCollectionNames(t.Context(), bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	before := collections()
	r := benchResult(t, "--drivers", "mongodb", "--duration", "100ms")
	// A measurement may fail on a loaded machine: FerretDB answered in 69ms
	// at times, and the Go driver refuses an operation whose deadline is
	// nearer than its round trip. What this test checks is the drop, once
	// bench has measured.
	if !strings.Contains(r.stdout, "\nmongodb ") {
		r.wantCode(t, exitOK)
	}
	if after := collections(); len(after) > len(before) {
		t.Errorf("collections of %s: %v before bench, %v after", benchMongoDatabase, before, after)
	}
}
