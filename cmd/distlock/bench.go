package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/distlock/lock/cmd/distlock/internal/benchmark"
)

// exitInterrupted is bench's exit code when it was interrupted (128+SIGINT,
// as shells have it); it prints what it measured until then.
const exitInterrupted = 130

// benchFlags are the command line of 'distlock bench'.
type benchFlags struct {
	cmd      *command
	backends benchBackends
	// targets are the backends to measure, in the table's order, their
	// DSNs with bench's namespaces.
	targets  []benchTarget
	duration time.Duration
	jsonPath string
	svgPath  string
	hungPort int // the first of the hung measurement's ports; 0: free ports
	noHung   bool
	bar      bool // draw a progress bar on stderr
	faults   benchFaults
	// mongoGrants is the run's own collection, to drop at the end, when
	// bench added it to the mongodb DSN.
	mongoGrants *benchMongoGrants
}

// benchCmd runs 'distlock bench'.
func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	bf, code := parseBenchFlags(args, os.Getenv, stdout, stderr)
	if bf == nil {
		return code
	}
	outs, err := createBenchOutputs(bf)
	if err != nil {
		return report(stderr, "bench", failure(exitUsage, "%v", err))
	}
	plan := benchPlan(bf)
	r := benchmark.Run(ctx, plan, benchmark.NewProgress(stderr, bf.bar))
	if bf.mongoGrants != nil && slices.ContainsFunc(r.Rows, func(row benchmark.Row) bool { return row.Driver == "mongodb" }) {
		if err := bf.mongoGrants.drop(ctx); err != nil {
			fmt.Fprintln(stderr, "distlock: bench:", err)
		}
	}
	fmt.Fprintln(stdout)
	if err := benchmark.WriteTable(stdout, r); err != nil {
		fmt.Fprintln(stderr, "distlock: bench:", err)
	}
	for _, o := range outs {
		if err := o.write(r); err != nil {
			fmt.Fprintln(stderr, "distlock: bench:", err)
			code = exitBackend
			continue
		}
		fmt.Fprintf(stderr, "bench: wrote %s\n", o.path)
	}
	return max(code, benchExitCode(r))
}

// benchExitCode returns bench's exit code for r: interrupted; a
// measurement or a fault failed, a backend was skipped (every one was
// named), or none was measured; or success.
func benchExitCode(r *benchmark.Report) int {
	if r.Interrupted {
		return exitInterrupted
	}
	if len(r.Rows) == 0 || len(r.Skipped) > 0 || benchFaultsFailed(r) {
		return exitBackend
	}
	for _, row := range r.Rows {
		for _, f := range []*benchmark.Figures{&row.Uncontended, &row.Keys16, &row.Shared, &row.PerClient, row.Hung} {
			if f != nil && f.Error != "" {
				return exitBackend
			}
		}
	}
	return exitOK
}

// benchPlan returns what bench measures.
func benchPlan(bf *benchFlags) benchmark.Plan {
	plan := benchmark.Plan{Duration: bf.duration, Hold: time.Millisecond, HungBasePort: bf.hungPort, Faults: bf.faults.plan()}
	for _, t := range bf.targets {
		plan.Targets = append(plan.Targets, benchmark.Target{Driver: t.driver, DSN: t.dsn})
	}
	switch path, err := exec.LookPath("redis-server"); {
	case bf.noHung:
		plan.HungSkip = "--no-hung"
	case err != nil:
		plan.HungSkip = "redis-server is not in PATH (scripts/services.sh up installs it)"
	default:
		plan.RedisServer = path
	}
	return plan
}

// benchOutput is a file that bench writes its report to, created before the run
// so that a bad path fails at once.
type benchOutput struct {
	path  string
	f     *os.File
	write func(*benchmark.Report) error
}

// createBenchOutputs creates the files of --json and --svg.
func createBenchOutputs(bf *benchFlags) ([]benchOutput, error) {
	var outs []benchOutput
	for _, o := range []struct {
		path  string
		write func(io.Writer, *benchmark.Report) error
	}{{bf.jsonPath, benchmark.WriteJSON}, {bf.svgPath, benchmark.WriteSVG}} {
		if o.path == "" {
			continue
		}
		f, err := os.Create(o.path)
		if err != nil {
			for _, c := range outs {
				c.f.Close()
			}
			return nil, err
		}
		outs = append(outs, benchOutput{o.path, f, func(r *benchmark.Report) error {
			return errors.Join(o.write(f, r), f.Close())
		}})
	}
	return outs, nil
}
