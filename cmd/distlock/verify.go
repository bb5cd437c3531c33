package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/distlock/lock/driver"
)

// exitUnsafe is verify's exit code when a promise was broken, or a setting
// can break one.
const exitUnsafe = 1

const verifyAbout = `Checks a deployment against the promises the library makes: one holder at
a time, and fencing tokens that grow.

First it reads what each server says of its settings and judges them, changing
nothing: an eviction policy that can evict lock keys, a replica given as a
Redis master, one server given twice, persistence or fsync off, and so on. Each
finding says what can go wrong and what to change. Errors mean a promise can
break with nothing else failing; warnings are weaker promises the user may
accept (our test servers run without persistence, on purpose, and get
warnings). --lint-only stops there.

Then the contention run: --workers copies of distlock contend for two keys for
--duration, in a scratch namespace of the run's own (a table, a collection, a
key prefix, a chroot or a bucket named distlock_verify_RUN or
distlock-verify/RUN/); a DSN that names its own is refused. Each holder writes a
register under its token. The run pauses holders past their TTL (SIGSTOP), and
resets and slows the workers' connections (where the driver dials through a
dialer of the caller's): its own workers only, nothing else. Then it
checks what they did: overlapping holdings (with the offending pairs), tokens
that did not grow, register writes lost to a concurrent holder, the longest
time with no holder, and locks still held a TTL after the run. It drops the
namespace at the end, on SIGINT and SIGTERM, and on errors, where the driver
can; otherwise it says what stays (the locks in it expire). The memory driver,
which no two processes share, cannot be verified.

Exit codes: 0 no promise broken and no error found (warnings may be printed);
1 a promise was broken, or a finding is an error; 64 bad usage; 69 the backend
failed, or (--lint-only) the driver has no settings check; 130 interrupted.`

const verifyExamples = `  distlock verify --driver postgres --dsn "$PG_URL" --duration 30s
  distlock verify --lint-only --driver goredis --dsn 'redis://r1:6379,redis://r2:6379,redis://r3:6379'
  distlock verify --driver goredis --dsn "$REDIS_URLS" --json | jq '.run.overlaps'`

// verifyOptions are the parsed flags of 'distlock verify'.
type verifyOptions struct {
	cmd      *command
	backend  backend
	lintOnly bool
	json     bool
	timeout  time.Duration
	duration time.Duration
	ttl      time.Duration
	workers  int
	sweep    time.Duration
}

// findingJSON is one finding of 'distlock verify --json'.
type findingJSON struct {
	Severity string `json:"severity"`
	Rule     string `json:"rule"`
	Server   string `json:"server,omitempty"`
	Problem  string `json:"problem"`
	Fix      string `json:"fix"`
}

// findingsJSON returns the findings as --json prints them.
func findingsJSON(fs []driver.Finding) []findingJSON {
	out := make([]findingJSON, 0, len(fs))
	for _, f := range fs {
		out = append(out, findingJSON{Severity: f.Severity.String(), Rule: f.Rule, Server: f.Server, Problem: f.Problem, Fix: f.Fix})
	}
	return out
}

// verifyCmd runs 'distlock verify'.
func verifyCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return verifyWith(ctx, args, stdout, stderr, openConnector, nil)
}

// verifyWith is verifyCmd with the contention run's connectors opened by
// open, and its workers started by command (nil: distlock again).
func verifyWith(ctx context.Context, args []string, stdout, stderr io.Writer, open openFunc, command func() (*exec.Cmd, error)) int {
	o, err := parseVerify(args, stdout)
	if err != nil {
		return report(stderr, "verify", err)
	}
	client, err := o.backend.open(o.cmd, stderr)
	if err != nil {
		return report(stderr, "verify", err)
	}
	defer client.Close()
	if !o.lintOnly && o.backend.driver == "memory" {
		return report(stderr, "verify", failure(exitUsage, "the memory driver keeps its locks in one process, and the contention run needs several: give --lint-only, or another driver"))
	}
	lctx, cancel := context.WithTimeout(ctx, o.timeout)
	fs, err := client.CheckSettings(lctx)
	cancel()
	unchecked := errors.Is(err, errors.ErrUnsupported)
	switch {
	case unchecked && o.lintOnly:
		return report(stderr, "verify", failure(exitBackend, "driver %s has no settings check yet", o.backend.driver))
	case unchecked:
		fmt.Fprintf(stderr, "distlock: verify: driver %s has no settings check yet: only the contention run\n", o.backend.driver)
	case err != nil:
		return report(stderr, "verify", err)
	}
	lintFailed := slices.ContainsFunc(fs, func(f driver.Finding) bool { return f.Severity == driver.Error })
	if o.lintOnly {
		if err := o.print(stdout, fs); err != nil {
			return report(stderr, "verify", err)
		}
		if lintFailed {
			return exitUnsafe
		}
		return exitOK
	}
	if !o.json {
		if err := o.print(stdout, fs); err != nil {
			return report(stderr, "verify", err)
		}
		fmt.Fprintln(stdout)
	}
	c := contention{
		driver: o.backend.driver, dsn: o.backend.dsn,
		workers: o.workers, keys: 2, duration: o.duration, ttl: o.ttl, timeout: o.timeout, sweepAfter: o.sweep,
		open: open, command: command,
	}
	res, err := c.run(ctx)
	if ctx.Err() != nil {
		printLeft(stderr, res)
		fmt.Fprintln(stderr, "distlock: verify: interrupted")
		return exitInterrupted
	}
	if err != nil {
		printLeft(stderr, res)
		return report(stderr, "verify", err)
	}
	if o.json {
		err = printContentionJSON(stdout, c, res, fs)
	} else {
		err = printContention(stdout, c, res, lintFailed)
	}
	if err != nil {
		return report(stderr, "verify", err)
	}
	switch {
	case res.Broken() || lintFailed:
		return exitUnsafe
	case len(res.WorkerErrors) > 0 || res.Acquired == 0:
		fmt.Fprintf(stderr, "distlock: verify: the run is incomplete: %s\n", oneLine(cmp.Or(strings.Join(res.WorkerErrors, "\n"), strings.Join(res.FailedErrors, "\n"), "no acquisition")))
		return exitBackend
	}
	return exitOK
}

// printLeft says on w what a run that ended early dropped or left.
func printLeft(w io.Writer, res contentionResult) {
	switch {
	case res.dropped:
		fmt.Fprintf(w, "distlock: verify: scratch %s dropped\n", res.namespace)
	case res.left != "":
		fmt.Fprintf(w, "distlock: verify: scratch %s\n", res.left)
	}
	if res.dropErr != nil {
		fmt.Fprintf(w, "distlock: verify: drop: %s\n", oneLine(res.dropErr.Error()))
	}
}

// parseVerify parses the arguments of 'distlock verify' and checks them.
func parseVerify(args []string, stdout io.Writer) (*verifyOptions, error) {
	o := &verifyOptions{cmd: newCommand("verify",
		"distlock verify --driver D --dsn S [--duration 30s] [--workers N] [--ttl T] [--lint-only] [--json] [--timeout T]", verifyAbout, verifyExamples)}
	o.backend.register(o.cmd)
	o.cmd.fs.BoolVar(&o.lintOnly, "lint-only", false, "only check the servers' settings; no contention run")
	o.cmd.fs.BoolVar(&o.json, "json", false, "print JSON: with --lint-only an array of findings (severity, rule, server, problem, fix), else an object with the findings and the run")
	o.cmd.fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "give up on each call of verify's own to the backend after this long")
	o.cmd.fs.DurationVar(&o.duration, "duration", 30*time.Second, "how long the workers contend")
	o.cmd.fs.DurationVar(&o.ttl, "ttl", 2*time.Second, "the TTL of the workers' locks; holders are paused for 1.5 TTLs")
	o.cmd.fs.IntVar(&o.workers, "workers", 4, "worker processes contending")
	o.cmd.fs.DurationVar(&o.sweep, "sweep-after", time.Minute, "drop the scratch namespaces of earlier runs that began this long ago and are no longer in use (a run killed by SIGKILL leaves its own)")
	if err := o.cmd.parse(args, stdout); err != nil {
		return nil, err
	}
	switch {
	case o.cmd.fs.NArg() > 0:
		return nil, failure(exitUsage, "unexpected argument %q", o.cmd.fs.Arg(0))
	case o.timeout <= 0:
		return nil, failure(exitUsage, "--timeout %v is not positive", o.timeout)
	case o.ttl < 100*time.Millisecond:
		return nil, failure(exitUsage, "--ttl %v is under 100ms", o.ttl)
	case o.duration < 2*o.ttl:
		return nil, failure(exitUsage, "--duration %v is under two TTLs (%v)", o.duration, 2*o.ttl)
	case o.sweep < 0:
		return nil, failure(exitUsage, "--sweep-after %v is negative", o.sweep)
	case o.workers < 2:
		return nil, failure(exitUsage, "--workers %d: it takes two to contend", o.workers)
	}
	return o, nil
}

// print writes the findings as text or as JSON.
func (o *verifyOptions) print(w io.Writer, fs []driver.Finding) error {
	if o.json {
		return json.NewEncoder(w).Encode(findingsJSON(fs))
	}
	errs, warns := 0, 0
	for _, f := range fs {
		if f.Severity == driver.Error {
			errs++
		} else {
			warns++
		}
		where := ""
		if f.Server != "" {
			where = " (" + f.Server + ")"
		}
		fmt.Fprintf(w, "%-7s  %s%s\n         %s\n         fix: %s\n", f.Severity, f.Rule, where, f.Problem, f.Fix)
	}
	_, err := fmt.Fprintf(w, "%s, %s\n", plural(errs, "error"), plural(warns, "warning"))
	return err
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
