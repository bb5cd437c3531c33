package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/distlock/lock/cmd/distlock/internal/benchmark"
)

const benchSynopsis = "distlock bench [--driver D [--dsn S]]... [--duration T] [--json FILE] [--svg FILE] [--hung-port N | --no-hung] [--faults --servers-dir DIR]"

const benchAbout = `Measures lock backends side by side: uncontended acquire+release latency
(p50/p99, one goroutine, TryAcquire+Release), throughput of 16 goroutines on
distinct keys (one client), handoffs per second and wait p50/p99 of 8
goroutines taking turns at one key, holding it 1ms (one shared client, then a
client each), and, for Redlock (goredis, redigo), uncontended latency with 2
of 5 nodes hung: on 5 redis-server processes of bench's own, on loopback ports
the system picks (or --hung-port to +4), two stopped with SIGSTOP, all
stopped by PID when bench ends. A table goes to stdout, progress to stderr.

Name each backend with --driver D and its DSN with --dsn S, as run and status
take them. Both repeat, and pair in order: the first --dsn goes with the
first --driver other than memory, which takes none. Without these flags,
bench reads $DISTLOCK_BENCH, entries separated by ';', each DRIVER=DSN or
memory alone (a DSN that holds a ';' goes in --dsn); else $DISTLOCK_DRIVER
and $DISTLOCK_DSN, as run does. Given none, it says so and measures memory
only: no DSN defaults to a server. The table keeps the order given.

What bench leaves on your servers: its keys, under distlock-bench/RUN/ (RUN
is random), a few dozen per backend. Unless the DSN sets its own, it adds
a namespace: for postgres and mysql the table distlock_bench_leases (created
if missing; its rows stay, as the drivers never delete rows); for mongodb
the collection distlock_bench.grants_RUN, dropped when bench ends (a DSN
with distlock_database or distlock_collection keeps its collection); for
etcd the prefix distlock-bench/; for zookeeper the chroot /distlock-bench
(created if missing). Redis keys expire with their TTL (with fencing=true,
a small counter per key stays); nats keys expire, in the DSN's bucket
(default distlock, created if missing).

` + benchFaultsAbout + `

Exit codes: 0 ok; 64 bad usage; 69 a measurement or a fault failed, a
server killed is not running again, a backend did not answer within 3s
(the table shows it skipped), or none was measured; 130 interrupted (the
table shows what was measured until then).`

const benchExamples = `  distlock bench                     # memory alone: no backend named
  distlock bench --driver memory --driver postgres --dsn "$PG_URL" --duration 1s --json bench.json --svg bench.svg
  distlock bench --driver goredis --dsn 'redis://r1:6379,redis://r2:6379,redis://r3:6379?fencing=true' \
    --driver postgres --dsn "$PG_URL"
  DISTLOCK_BENCH="memory; postgres=$PG_URL; mysql=$MYSQL_DSN" distlock bench --no-hung
  distlock bench --driver postgres --dsn "$DISTLOCK_POSTGRES_DSN" --faults --servers-dir "$DISTLOCK_SERVICES_DIR"`

// parseBenchFlags parses bench's command line and resolves its backends
// (see benchBackends.resolve) through getenv. It returns nil and the exit
// code when bench should not run (--help, or a usage error, which it
// prints on stderr).
func parseBenchFlags(args []string, getenv func(string) string, stdout, stderr io.Writer) (*benchFlags, int) {
	bf := &benchFlags{cmd: newCommand("bench", benchSynopsis, benchAbout, benchExamples)}
	bf.register()
	err := bf.cmd.parse(args, stdout)
	if err != nil {
		err = benchRetiredFlag(err)
	} else {
		err = bf.check(getenv, stderr)
	}
	if err != nil {
		return nil, report(stderr, "bench", err)
	}
	bf.bar = benchTerminal(stderr)
	return bf, exitOK
}

// register adds bench's flags to its command. A new flag is registered
// here, its field added to benchFlags, and its check to check.
func (bf *benchFlags) register() {
	fs := bf.cmd.fs
	bf.backends.register(bf.cmd)
	fs.DurationVar(&bf.duration, "duration", 2*time.Second, "the length of each measurement (4 per backend, and 1 more for Redlock)")
	fs.StringVar(&bf.jsonPath, "json", "", "write every figure and the machine's facts as JSON to this file")
	fs.StringVar(&bf.svgPath, "svg", "", "write a self-contained SVG chart to this file")
	fs.IntVar(&bf.hungPort, "hung-port", 0, fmt.Sprintf("the first of %d ports in a row for bench's own redis-servers, never 6379 (default: free ports the system picks)", benchmark.HungNodeCount))
	fs.BoolVar(&bf.noHung, "no-hung", false, "skip the measurement with nodes hung")
	bf.faults.register(bf.cmd)
}

// check checks the parsed flags, and resolves the backends, each with
// bench's namespace added to its DSN. Without a backend named, it says
// on stderr that it measures memory only.
func (bf *benchFlags) check(getenv func(string) string, stderr io.Writer) error {
	fs := bf.cmd.fs
	if fs.NArg() > 0 {
		return failure(exitUsage, "unexpected argument %s", quoteArg(fs.Arg(0)))
	}
	if bf.duration < 10*time.Millisecond || bf.duration > time.Hour {
		return failure(exitUsage, "--duration %v: want 10ms to 1h", bf.duration)
	}
	if last := bf.hungPort + benchmark.HungNodeCount - 1; bf.hungPort != 0 &&
		(bf.hungPort < 1024 || last > 65535 || (bf.hungPort <= 6379 && 6379 <= last)) {
		return failure(exitUsage, "--hung-port %d: want the first of %d free ports from 1024 up, never Redis's 6379", bf.hungPort, benchmark.HungNodeCount)
	}
	if err := bf.faults.check(); err != nil {
		return err
	}
	targets, from, err := bf.backends.resolve(getenv)
	if err != nil {
		return err
	}
	switch from {
	case benchFromNowhere:
		fmt.Fprintln(stderr, "distlock: bench: no backend named (--driver and --dsn, $DISTLOCK_BENCH, or $DISTLOCK_DRIVER and $DISTLOCK_DSN): measuring memory only")
	case benchFromList, benchFromOne:
		fmt.Fprintf(stderr, "bench: the backends of %s\n", from)
	}
	run := benchRunID()
	for _, t := range targets {
		dsn, grants := benchNamespaced(t.driver, t.dsn, run)
		bf.targets = append(bf.targets, benchTarget{driver: t.driver, dsn: dsn})
		if grants != nil {
			bf.mongoGrants = grants
		}
	}
	return nil
}

// benchRetiredFlag returns err, or, if err is about a flag that bench
// took before it took --driver and --dsn, a usage error that shows the
// new form.
func benchRetiredFlag(err error) error {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	name = strings.TrimPrefix(name, "-")
	switch {
	case !ok:
	case name == "drivers":
		return failure(exitUsage, "--drivers is gone: name each backend with --driver D and its --dsn S, as run and status do (memory takes no --dsn), as in --driver memory --driver postgres --dsn DSN")
	case strings.HasPrefix(name, "dsn-"):
		return failure(exitUsage, "--%s is gone: give --driver %s --dsn DSN, as run and status do", name, strings.TrimPrefix(name, "dsn-"))
	}
	return err
}

// benchRunID returns a random name for a run's own collection.
func benchRunID() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// benchTerminal reports whether w is a terminal a progress bar may be drawn on.
func benchTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && benchmark.IsTerminal(f)
}
