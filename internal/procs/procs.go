// Package procs runs worker processes that contend for locks, pauses
// them, and checks what they recorded. It is the engine under
// conformance.RunProcesses (for driver authors' tests) and 'distlock
// verify' (for users' deployments). It knows nothing of testing.T: a
// caller says how a worker process starts, what faults to deal, and how
// to count what the backend still holds.
//
// A run goes in three steps. [Run] starts the workers and a nemesis. Each
// worker ([Work]) acquires, writes a register under its token, releases,
// and records each holding as a line of JSON. Then [Check] reads the
// records and the registers into a [Report].
package procs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Environment of a worker process. [Run] sets them; [WorkerFromEnv] reads
// them.
const (
	EnvWorker       = "DISTLOCK_PROCS_WORKER" // its index
	envWorkerDir    = "DISTLOCK_PROCS_DIR"    // where it writes its records, and the registers are
	envWorkerConfig = "DISTLOCK_PROCS_CONFIG" // its Worker settings, as JSON
)

// Action is a fault the nemesis can deal, by name. Do breaks something
// and mends it before it returns. It runs on Run's goroutine.
type Action struct {
	Name string
	Do   func()
}

// Config describes a run of [Run]. Zero values take the defaults of
// [Config.WithDefaults].
type Config struct {
	Workers  int           // processes contending; default 4
	Keys     int           // keys they contend for; default 2
	Duration time.Duration // of the contention; default 10s
	TTL      time.Duration // of every lock; default 2s
	Permits  int           // if above 0, workers take permits of semaphores of that many
	Fenced   bool          // the driver issues fencing tokens: check their order

	// Losses, if not nil, are the moments when the backend lost fencing
	// counters, which the nemesis's actions record: a token regression
	// across one is counted in Report.RegressionsAcrossLoss, not in
	// Report.Regressions.
	Losses *Losses

	// PauseHolders lets the nemesis stop a worker that holds a lock
	// (SIGSTOP) for 1.5 TTLs, then resume it.
	PauseHolders bool

	// NetFaults lets the nemesis break a worker's connections: reset them
	// all (SIGUSR1), or slow their reads and writes for 1.5 TTLs (SIGUSR2). Only
	// workers that take these signals ([Worker.ServeNetFaults]) get them.
	NetFaults bool

	// Actions are more faults for the nemesis to deal.
	Actions []Action

	// Dir holds the records and the registers. Required.
	Dir string

	// Command returns worker i's process, not started. Run adds the
	// worker's environment, its output file and a parent-death signal.
	// Required.
	Command func(i int) (*exec.Cmd, error)

	// Leftovers, if not nil, counts the locks the backend still holds on
	// the run's keys once the workers have ended. If any are left, Run
	// counts again a TTL and a half later, when none may be.
	Leftovers func() int
}

// WithDefaults returns c with its zero values set to the defaults.
func (c Config) WithDefaults() Config {
	if c.Workers <= 0 {
		c.Workers = 4
	}
	if c.Keys <= 0 {
		c.Keys = 2
	}
	if c.Duration <= 0 {
		c.Duration = 10 * time.Second
	}
	if c.TTL <= 0 {
		c.TTL = 2 * time.Second
	}
	return c
}

// Result is what a run saw: the report and the offending pairs of
// holdings behind its overlaps and token regressions.
type Result struct {
	Report
	Pairs []Pair
	Start time.Time // when the first worker was started, for times relative to the run
}

// Run starts c.Workers worker processes, each contending for c.Keys keys
// for c.Duration, runs the nemesis meanwhile, waits for the workers, and
// checks their records. If ctx ends first, Run stops the workers (SIGCONT,
// then SIGKILL), waits for them, and returns ctx's error. It returns an
// error, and no result, only when a worker could not be started or the
// run was cut short. A worker that failed is in Report.WorkerErrors.
func Run(ctx context.Context, c Config) (Result, error) {
	c = c.WithDefaults()
	if c.Dir == "" || c.Command == nil {
		return Result{}, errors.New("procs: Config.Dir and Config.Command are required")
	}
	w := Worker{Keys: c.Keys, Duration: c.Duration, TTL: c.TTL, Permits: c.Permits}
	start := time.Now()
	workers := make([]*exec.Cmd, 0, c.Workers)
	defer func() { // should the run stop early
		for _, w := range workers {
			if w.ProcessState == nil {
				w.Process.Signal(syscall.SIGCONT)
				w.Process.Kill()
				w.Wait()
			}
		}
	}()
	for i := range c.Workers {
		cmd, err := c.Command(i)
		if err != nil {
			return Result{}, fmt.Errorf("worker %d: %w", i, err)
		}
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Env = append(cmd.Env, WorkerEnv(i, c.Dir, w)...)
		out, err := os.Create(outFile(c.Dir, i))
		if err != nil {
			return Result{}, err
		}
		cmd.Stdout, cmd.Stderr = out, out
		// Should the parent die (a timeout, a kill), so do its workers,
		// even one the nemesis left stopped.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		err = cmd.Start()
		out.Close()
		if err != nil {
			return Result{}, fmt.Errorf("starting worker %d: %w", i, err)
		}
		workers = append(workers, cmd)
	}
	faults := Nemesis(ctx, NemesisPlan{
		Dir: c.Dir, Workers: workers, TTL: c.TTL, PauseHolders: c.PauseHolders, NetFaults: c.NetFaults, Actions: c.Actions,
		Stop: start.Add(c.Duration - c.TTL),
	})
	var res Result
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		for i, w := range workers {
			if err := w.Wait(); err != nil {
				out, _ := os.ReadFile(outFile(c.Dir, i))
				res.WorkerErrors = append(res.WorkerErrors, fmt.Sprintf("worker %d: %v\n%s", i, err, TailOf(out, 2000)))
			}
		}
	}()
	select {
	case <-waited:
	case <-ctx.Done():
		for _, w := range workers {
			w.Process.Signal(syscall.SIGCONT)
			w.Process.Kill()
		}
		<-waited
	}
	if err := ctx.Err(); err != nil {
		// Workers that a terminal's SIGINT ended too may have been waited
		// for first. A run cut short checks nothing.
		return Result{}, err
	}
	res.Took = time.Since(start)
	res.Faults = faults
	res.Start = start
	Check(c, &res)
	if c.Leftovers != nil {
		res.LeftoversCounted = true
		res.LeftAtEnd = c.Leftovers()
		if res.LeftAtEnd > 0 {
			select {
			case <-time.After(c.TTL * 3 / 2):
			case <-ctx.Done():
				return Result{}, ctx.Err()
			}
			res.LeftAfterTTL = c.Leftovers()
		}
	}
	return res, nil
}

// WorkerEnv is the environment that makes a process worker i of a run in
// dir, told w (see [WorkerFromEnv]).
func WorkerEnv(i int, dir string, w Worker) []string {
	cfg, _ := json.Marshal(w)
	return []string{EnvWorker + "=" + strconv.Itoa(i), envWorkerDir + "=" + dir, envWorkerConfig + "=" + string(cfg)}
}

// outFile names worker i's output file in dir.
func outFile(dir string, i int) string { return filepath.Join(dir, fmt.Sprintf("worker-%d.out", i)) }

// recordFile names worker i's records in dir.
func recordFile(dir string, i int) string {
	return filepath.Join(dir, fmt.Sprintf("worker-%d.jsonl", i))
}

// TailOf returns the last n bytes of b, as a string.
func TailOf(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
