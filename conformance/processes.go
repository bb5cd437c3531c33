package conformance

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/internal/procs"
)

// Processes describes a run of [RunProcesses]. In a run, worker processes
// contend for keys while a nemesis breaks the backend and pauses holders.
type Processes struct {
	// Open opens a client in a worker process. Required.
	Open func(t testing.TB) *lock.Client

	Workers  int           // processes contending; default 4
	Keys     int           // keys they contend for; default 2
	Duration time.Duration // of the contention; default 10s
	TTL      time.Duration // of every lock; default 2s
	Fenced   bool          // the driver issues fencing tokens: check their order

	// Permits, if above 0, makes the workers take permits of semaphores of
	// that many (one semaphore per key) instead of locks. Each slot is
	// checked as a lock, with a register of its own, and each semaphore
	// for more than Permits holdings at once (see History.PermitViolations).
	Permits int

	// Faults, if not nil, is what the nemesis breaks. It hangs and kills
	// minorities of nodes (and majorities, with Majority). It restarts a
	// killed node only after a TTL, as Redlock requires.
	Faults   Faults
	Majority bool

	// KillsLoseCounters says that a node Faults kills comes back without
	// the fencing counters it kept (Redis without persistence), which the
	// driver documents as breaking token order (drivers/redlock/DESIGN.md,
	// "Restarts and persistence"). A token regression across such a kill
	// is then counted in ProcessReport.RegressionsAcrossLoss, which
	// RequireSafe allows, and not in ProcessReport.Regressions.
	KillsLoseCounters bool

	// PauseHolders lets the nemesis stop a worker process (SIGSTOP) for
	// 1.5 TTLs, then resume it. That makes a holder paused past its TTL.
	PauseHolders bool

	// Actions are more faults for the nemesis to choose from, by name. Each
	// breaks something (slows a link, resets connections) and mends it
	// before it returns. They run on the test's goroutine.
	Actions map[string]func(t *testing.T)

	// Leftovers, if not nil, counts the locks the backend still holds on
	// the run's keys. Those are keys, rows with a live lease, or nodes, but
	// not what a driver keeps by design, such as a key's fencing counter.
	// Leftovers is called once the workers have ended, when every lock was
	// released or given up. If anything is left then, it is called again a
	// TTL and a half later, when nothing may be (see
	// ProcessReport.LeftAfterTTL).
	Leftovers func(t *testing.T) int
}

// ProcessReport is what a run of RunProcesses saw.
type ProcessReport struct {
	Acquired, Failed      int            // acquisitions, and attempts that failed with an error
	Faults                map[string]int // the nemesis's actions, by kind
	Overlaps              int            // pairs of holdings of one key (a semaphore's slot) whose validity windows overlap
	OverPermits           int            // holdings that began while Processes.Permits others of their semaphore were held
	MostHolders           int            // the most holdings of one semaphore at once, if Processes.Permits
	ExpiredAtReturn       int            // locks whose validity had passed when Acquire returned them
	Regressions           int            // tokens that did not grow (fenced drivers)
	RegressionsAcrossLoss int            // tokens that did not grow across a kill that lost a node's counters (see Processes.KillsLoseCounters): not in Regressions
	Writes, LostWrites    int            // register writes under the lock, and those a concurrent holder overwrote
	StaleRefused          int            // writes of a token older than the register's, refused (a paused holder's)
	LeftoversCounted      bool           // Processes.Leftovers was given
	LeftAtEnd             int            // locks the backend held when the workers had ended (a release that failed under a fault)
	LeftAfterTTL          int            // and a TTL and a half later: a leak, unless 0
	LongestUnavailable    time.Duration  // the longest time without any acquisition
	Report                string         // the offending holdings, if any
	WorkerErrors          []string       // workers that did not finish cleanly
	FailedErrors          []string       // the first few distinct errors of failed attempts, with their workers
	Took                  time.Duration  // the whole run
	AcquiredPerSecond     float64
}

// Environment of a worker process, besides the engine's.
const (
	envWorkerName = "DISTLOCK_CONFORMANCE_NAME" // SharedName's
	// EnvWorkerOf is set in every worker process. testenv.Main does not
	// take the servers' locks when it is set, since the parent test holds
	// them.
	EnvWorkerOf = "DISTLOCK_WORKER_OF"
)

// sharedName is Shared's value in the parent, for its workers.
var sharedName string

// Shared returns value in the parent test, and passes it to the worker
// processes of its next RunProcesses. There Shared returns the parent's
// value, whatever it is given. It is for what they must agree on that only
// the parent knows (a proxy's address, a random name). Call it once per
// run, before RunProcesses.
func Shared(value string) string {
	if InWorker() {
		return os.Getenv(envWorkerName)
	}
	sharedName = value
	return value
}

// SharedName is Shared of prefix and random hex digits. It names what the
// parent and its workers share (a table, a key prefix).
func SharedName(prefix string) string {
	return Shared(prefix + strconv.FormatUint(rand.Uint64()&0xffffffffff, 16))
}

// InWorker reports whether the process is a worker of RunProcesses. The
// test that calls RunProcesses runs again in each worker, up to that call.
func InWorker() bool { return os.Getenv(procs.EnvWorker) != "" }

// RunProcesses runs p.Workers copies of the calling test's binary as
// worker processes, each opening a client with p.Open and contending for
// p.Keys keys for p.Duration. Every holding reads a register (a file per
// key) and pauses up to a millisecond. If its validity has more than a
// tenth of the TTL left, it then writes the register back incremented,
// with its token. The register refuses a token older than its own (a
// paused holder's). A write lost to a concurrent holder shows as a count
// below the writes. Meanwhile the nemesis breaks p.Faults's nodes and
// pauses workers on a random schedule, and mends all before the end.
// RunProcesses returns what the records show. The caller decides what
// must hold (see ProcessReport).
//
// In a worker process (the same test, run again by RunProcesses), it runs
// the worker and exits the process.
func RunProcesses(t *testing.T, p Processes) ProcessReport {
	p = p.withDefaults()
	if w, ok, err := procs.WorkerFromEnv(); ok {
		if err != nil {
			t.Fatal(err)
		}
		c := p.Open(t)
		err := procs.Work(c, w)
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		os.Exit(0)
	}
	res, err := procs.Run(context.Background(), p.config(t, t.TempDir(), p.losses()))
	if err != nil {
		t.Fatal(err)
	}
	return ProcessReport(res.Report)
}

// losses returns the record of the kills that lose counters, if p's
// nemesis makes any (see KillsLoseCounters), or nil.
func (p Processes) losses() *procs.Losses {
	if !p.KillsLoseCounters || p.Faults == nil {
		return nil
	}
	return &procs.Losses{Within: p.TTL}
}

// config is the engine's configuration of a run of p in dir. Its workers
// are the calling test, run again. Kills that lose counters go to losses,
// if not nil.
func (p Processes) config(t *testing.T, dir string, losses *procs.Losses) procs.Config {
	c := procs.Config{
		Workers: p.Workers, Keys: p.Keys, Duration: p.Duration, TTL: p.TTL, Permits: p.Permits, Fenced: p.Fenced,
		Losses:       losses,
		PauseHolders: p.PauseHolders,
		Actions:      p.nemesisActions(t, losses),
		Dir:          dir,
		Command:      func(int) (*exec.Cmd, error) { return p.workerCommand(t), nil },
	}
	if p.Leftovers != nil {
		c.Leftovers = func() int { return p.Leftovers(t) }
	}
	return c
}

// workerCommand is a worker process: the test named t, run again.
func (p Processes) workerCommand(t *testing.T) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run="+runPattern(t.Name()), "-test.count=1", "-test.timeout="+(p.Duration+2*time.Minute).String())
	cmd.Env = append(os.Environ(), envWorkerName+"="+sharedName, EnvWorkerOf+"=1")
	return cmd
}

// nemesisActions are the nemesis's faults of p, besides pausing holders:
// hanging and killing minorities of p.Faults's nodes (and majorities, with
// p.Majority), and p.Actions. A killed node restarts only after a TTL, as
// Redlock requires. Each kill is recorded in losses, if not nil, as it
// begins.
func (p Processes) nemesisActions(t *testing.T, losses *procs.Losses) []procs.Action {
	var actions []procs.Action
	if p.Faults != nil {
		nodes := p.Faults.Nodes()
		minority := max((nodes-1)/2, 1)
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
		hang := func(n int) func() {
			return func() {
				picked := rng.Perm(nodes)[:n]
				for _, i := range picked {
					p.Faults.Hang(t, i)
				}
				time.Sleep(time.Duration(300+rng.IntN(900)) * time.Millisecond)
				for _, i := range picked {
					p.Faults.Restart(t, i)
				}
			}
		}
		actions = append(actions, procs.Action{Name: "hang-minority", Do: hang(minority)}, procs.Action{Name: "kill-minority", Do: func() {
			picked := rng.Perm(nodes)[:minority]
			if losses != nil {
				losses.Add(time.Now())
			}
			for _, i := range picked {
				p.Faults.Kill(t, i)
			}
			time.Sleep(p.TTL + 200*time.Millisecond) // a delayed restart: Redlock's rule
			for _, i := range picked {
				p.Faults.Restart(t, i)
			}
		}})
		if p.Majority {
			actions = append(actions, procs.Action{Name: "hang-majority", Do: hang(nodes/2 + 1)})
		}
	}
	for name, f := range p.Actions {
		actions = append(actions, procs.Action{Name: name, Do: func() { f(t) }})
	}
	return actions
}

func (p Processes) withDefaults() Processes {
	c := procs.Config{Workers: p.Workers, Keys: p.Keys, Duration: p.Duration, TTL: p.TTL}.WithDefaults()
	p.Workers, p.Keys, p.Duration, p.TTL = c.Workers, c.Keys, c.Duration, c.TTL
	if w, ok, err := procs.WorkerFromEnv(); ok && err == nil {
		p.Keys, p.Duration, p.TTL, p.Permits = w.Keys, w.Duration, w.TTL, w.Permits
	}
	return p
}

// runPattern is a -test.run pattern for exactly the test named name.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, s := range parts {
		parts[i] = "^" + regexp.QuoteMeta(s) + "$"
	}
	return strings.Join(parts, "/")
}

// String is the report in a paragraph.
func (r ProcessReport) String() string { return procs.Report(r).String() }

// RequireSafe fails t unless rep shows a safe lock. A safe lock has
// workers that finished and acquisitions made. It has no overlap, token
// regression or lost write, and no lock left behind a TTL after the run.
// A token regression across a kill that lost a node's counters, which a
// driver may disclaim (see Processes.KillsLoseCounters), is not one.
func RequireSafe(t *testing.T, rep ProcessReport) {
	t.Helper()
	if len(rep.WorkerErrors) > 0 {
		t.Errorf("workers failed:\n%s", strings.Join(rep.WorkerErrors, "\n"))
	}
	if rep.Acquired == 0 {
		t.Errorf("no acquisition recorded; failed attempts said:\n%s", strings.Join(rep.FailedErrors, "\n"))
	}
	if rep.Overlaps != 0 || rep.Regressions != 0 || rep.LostWrites != 0 || rep.OverPermits != 0 {
		t.Errorf("%d overlaps, %d token regressions, %d lost writes, %d holdings over a semaphore's size:\n%s", rep.Overlaps, rep.Regressions, rep.LostWrites, rep.OverPermits, rep.Report)
	}
	if rep.ExpiredAtReturn != 0 {
		t.Errorf("%d acquisitions returned a lock whose validity had passed", rep.ExpiredAtReturn)
	}
	if rep.LeftAfterTTL != 0 {
		t.Errorf("%d locks left behind a TTL and a half after the run", rep.LeftAfterTTL)
	}
}

// RequireCaught fails t unless rep shows the violations of an unsafe lock
// (overlaps, regressions or lost writes) in a run whose workers finished.
func RequireCaught(t *testing.T, rep ProcessReport) {
	t.Helper()
	if len(rep.WorkerErrors) > 0 {
		t.Errorf("workers failed:\n%s", strings.Join(rep.WorkerErrors, "\n"))
	}
	if rep.Overlaps+rep.Regressions+rep.LostWrites+rep.OverPermits == 0 {
		t.Errorf("the unsafe variant was not caught: %v", rep)
	}
}

// SoakDuration returns the duration of a soak run, from DISTLOCK_SOAK (for
// instance 5m), or short when it is unset. Fault runs are short in make
// test and CI, and long only when asked for.
func SoakDuration(short time.Duration) time.Duration {
	if s := os.Getenv("DISTLOCK_SOAK"); s != "" {
		if d, err := time.ParseDuration(s); err == nil && d > 0 {
			return d
		}
	}
	return short
}
