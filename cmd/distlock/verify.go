package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/distlock/lock/driver"
)

// exitUnsafe is verify's exit code when it found a setting that can break
// a promise.
const exitUnsafe = 1

const verifyAbout = `Checks a deployment against the promises the library makes: one holder at
a time, and fencing tokens that grow. With --lint-only, it reads what each
server says of its settings and judges them, changing nothing: an eviction
policy that can evict lock keys, a replica given as a Redis master, one server
given twice, persistence or fsync off, and so on. Each finding says what can
go wrong and what to change. Errors mean a promise can break with nothing else
failing; warnings are weaker promises the user may accept (our test servers
run without persistence, on purpose, and get warnings).

The contention run (worker processes that contend for keys in a scratch
namespace while it pauses holders and slows their connections, then a check
of the history) is not built yet: give --lint-only.

Exit codes: 0 no error found (warnings may be printed); 1 a finding is an
error; 64 bad usage; 69 the backend failed, or the driver has no settings
check.`

const verifyExamples = `  distlock verify --lint-only --driver goredis --dsn 'redis://r1:6379,redis://r2:6379,redis://r3:6379'
  distlock verify --lint-only --driver postgres --dsn "$PG_URL" --json | jq '.[] | select(.severity == "error")'`

// verifyOptions are the parsed flags of 'distlock verify'.
type verifyOptions struct {
	cmd      *command
	backend  backend
	lintOnly bool
	json     bool
	timeout  time.Duration
}

// findingJSON is one finding of 'distlock verify --json'.
type findingJSON struct {
	Severity string `json:"severity"`
	Rule     string `json:"rule"`
	Server   string `json:"server,omitempty"`
	Problem  string `json:"problem"`
	Fix      string `json:"fix"`
}

// verifyCmd runs 'distlock verify'.
func verifyCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseVerify(args, stdout)
	if err != nil {
		return report(stderr, "verify", err)
	}
	client, err := o.backend.open(o.cmd, stderr)
	if err != nil {
		return report(stderr, "verify", err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	fs, err := client.CheckSettings(ctx)
	if errors.Is(err, errors.ErrUnsupported) {
		return report(stderr, "verify", failure(exitBackend, "driver %s has no settings check yet", o.backend.driver))
	}
	if err != nil {
		return report(stderr, "verify", err)
	}
	if err := o.print(stdout, fs); err != nil {
		return report(stderr, "verify", err)
	}
	for _, f := range fs {
		if f.Severity == driver.Error {
			return exitUnsafe
		}
	}
	return exitOK
}

// parseVerify parses the arguments of 'distlock verify' and checks them.
func parseVerify(args []string, stdout io.Writer) (*verifyOptions, error) {
	o := &verifyOptions{cmd: newCommand("verify",
		"distlock verify --lint-only --driver D --dsn S [--json] [--timeout T]", verifyAbout, verifyExamples)}
	o.backend.register(o.cmd)
	o.cmd.fs.BoolVar(&o.lintOnly, "lint-only", false, "only check the servers' settings (required: the contention run is not built yet)")
	o.cmd.fs.BoolVar(&o.json, "json", false, "print a JSON array of findings (severity, rule, server, problem, fix)")
	o.cmd.fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "give up on the backend after this long")
	if err := o.cmd.parse(args, stdout); err != nil {
		return nil, err
	}
	switch {
	case o.cmd.fs.NArg() > 0:
		return nil, failure(exitUsage, "unexpected argument %q", o.cmd.fs.Arg(0))
	case !o.lintOnly:
		return nil, failure(exitUsage, "the contention run is not built yet: give --lint-only to check the settings")
	case o.timeout <= 0:
		return nil, failure(exitUsage, "--timeout %v is not positive", o.timeout)
	}
	return o, nil
}

// print writes the findings as text or as JSON.
func (o *verifyOptions) print(w io.Writer, fs []driver.Finding) error {
	if o.json {
		out := make([]findingJSON, 0, len(fs))
		for _, f := range fs {
			out = append(out, findingJSON{Severity: f.Severity.String(), Rule: f.Rule, Server: f.Server, Problem: f.Problem, Fix: f.Fix})
		}
		return json.NewEncoder(w).Encode(out)
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
