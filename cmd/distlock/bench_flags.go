package main

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/distlock/lock/cmd/distlock/internal/benchmark"
)

// The test servers of scripts/services.sh, bench's defaults when the
// environment does not name others. Never the standard ports.
const (
	benchRedisAddrs  = "127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003,127.0.0.1:7004,127.0.0.1:7005"
	benchPostgresDSN = "postgres://postgres@127.0.0.1:15432/distlock?sslmode=disable"
	benchMongoURI    = "mongodb://127.0.0.1:27117/"
	benchEtcdHosts   = "127.0.0.1:23791,127.0.0.1:23792,127.0.0.1:23793"
	benchZKServers   = "127.0.0.1:21811,127.0.0.1:21812,127.0.0.1:21813"
	benchMemoryStore = "distlock-bench"
)

// The parameters bench adds to the default DSNs (from the environment
// that scripts/services.sh env sets, or the test servers'): a table, a
// database and a collection of its own, so that its keys never mix with
// others'. The collection is the run's own, and dropped when it ends (see
// benchMongoGrants).
const (
	benchPostgresParams = "distlock_table=distlock_bench_leases"
	benchMongoDatabase  = "distlock_bench"
	benchMongoParams    = "distlock_database=" + benchMongoDatabase + "&distlock_collection=grants_RUN"
	benchEtcdParams     = "prefix=distlock-bench/"
	benchZKRoot         = "/distlock-bench"
)

// benchUsage is bench's --help text.
var benchUsage = `Usage: distlock bench [flags]

Measures every driver side by side: uncontended acquire+release latency
(p50/p99, one goroutine, TryAcquire+Release), throughput of 16 goroutines on
distinct keys (one client), handoffs per second and wait p50/p99 of 8
goroutines taking turns at one key, holding it 1ms (one shared client, then a
client each), and, for Redlock, uncontended latency with 2 of 5 nodes hung:
on 5 redis-server processes of bench's own (ports --hung-port to +4), two
stopped with SIGSTOP, all stopped by PID when bench ends. A table goes to
stdout, progress to stderr. A driver whose server does not answer is skipped,
and the table says how to start the test servers (scripts/services.sh up).

Flags:
  --drivers LIST      comma-separated (default: ` + strings.Join(benchDrivers(), ",") + `)
  --duration D        each measurement's length (default 2s: about a minute in all)
  --json FILE         write every figure and the machine's facts as JSON
  --svg FILE          write a self-contained SVG chart
` + benchDSNHelp() + `  --hung-port N       first port of bench's own Redis nodes (default 7101; never 6379)
  --no-hung           skip the measurement with nodes hung

Examples:
  distlock bench                 # every driver, on the servers of scripts/services.sh up
  distlock bench --drivers memory,postgres --duration 1s --json bench.json --svg bench.svg
  distlock bench --drivers goredis --dsn-goredis 'redis://a:7001,redis://b:7001,redis://c:7001?fencing=true'

Exit codes: 0 ok; 64 usage; 69 a measurement failed, a driver named in
--drivers was skipped, or none was measured; 130 interrupted (the table
shows what was measured until then).
`

// parseBenchFlags parses bench's command line. It returns nil and the exit
// code when bench should not run (--help, or a usage error).
func parseBenchFlags(args []string, stdout, stderr io.Writer) (*benchFlags, int) {
	bf := &benchFlags{dsn: make(map[string]string)}
	fs := flag.NewFlagSet("distlock bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	drivers := fs.String("drivers", strings.Join(benchDrivers(), ","), "")
	fs.DurationVar(&bf.duration, "duration", 2*time.Second, "")
	fs.StringVar(&bf.jsonPath, "json", "", "")
	fs.StringVar(&bf.svgPath, "svg", "", "")
	for _, d := range benchDrivers()[1:] {
		fs.Func("dsn-"+d, "", func(s string) error { bf.dsn[d] = s; return nil })
	}
	fs.IntVar(&bf.hungPort, "hung-port", 7101, "")
	fs.BoolVar(&bf.noHung, "no-hung", false, "")
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, benchUsage)
		return nil, exitOK
	}
	if err == nil {
		err = checkBenchFlags(fs, bf, *drivers)
	}
	if err != nil {
		fmt.Fprintf(stderr, "distlock: bench: %v (see 'distlock bench --help')\n", err)
		return nil, exitUsage
	}
	bf.bar = benchTerminal(stderr)
	return bf, exitOK
}

// checkBenchFlags checks the parsed flags and fills in the defaults.
func checkBenchFlags(fs *flag.FlagSet, bf *benchFlags, drivers string) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	fs.Visit(func(f *flag.Flag) { bf.explicit = bf.explicit || f.Name == "drivers" })
	var err error
	if bf.drivers, err = parseBenchDrivers(drivers); err != nil {
		return err
	}
	if bf.duration < 10*time.Millisecond || bf.duration > time.Hour {
		return fmt.Errorf("--duration %v: want 10ms to 1h", bf.duration)
	}
	if last := bf.hungPort + benchmark.HungNodeCount - 1; bf.hungPort < 1024 || last > 65535 || (bf.hungPort <= 6379 && 6379 <= last) {
		return fmt.Errorf("--hung-port %d: want the first of %d free ports from 1024 up, never Redis's 6379", bf.hungPort, benchmark.HungNodeCount)
	}
	run := benchRunID()
	for _, d := range benchDrivers() {
		if bf.dsn[d] == "" {
			bf.dsn[d] = benchDefaultDSN(d, os.Getenv, run)
			bf.mongoGrants = bf.mongoGrants.or(d, bf.dsn[d], os.Getenv, run)
		}
	}
	return nil
}

// benchWithParams adds params (k=v&k=v) to a URL's query, or to a keyword/value
// string (k=v k=v), unless it sets the first of them already.
func benchWithParams(dsn, params string) string {
	first, _, _ := strings.Cut(params, "=")
	if strings.Contains(dsn, first+"=") {
		return dsn
	}
	scheme, rest, isURL := strings.Cut(dsn, "://")
	switch {
	case !isURL:
		return dsn + " " + strings.ReplaceAll(params, "&", " ")
	case strings.Contains(rest, "?"):
		return dsn + "&" + params
	case !strings.Contains(rest, "/"):
		return scheme + "://" + rest + "/?" + params
	}
	return dsn + "?" + params
}

// benchMongoBase returns the MongoDB URI that bench's default DSN starts
// from.
func benchMongoBase(getenv func(string) string) string {
	return cmp.Or(getenv("DISTLOCK_MONGODB_URI"), benchMongoURI)
}

// benchRunID returns a random name for a run's own collection.
func benchRunID() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
