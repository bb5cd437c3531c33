package drivertest

import (
	"testing"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/driver"
)

// ProcessRuns is a driver's cross-process runs: worker processes contend on
// the backend while a nemesis breaks it (see conformance.RunProcesses).
// Run them with [ProcessRuns.Run].
type ProcessRuns struct {
	// Driver is the driver. The workers' clients are opened on its
	// connectors.
	Driver driver.Driver

	// Prefix starts the name of each run's own storage (a table, a
	// collection, a key prefix): conformance.SharedName(Prefix) for the
	// safe run, conformance.SharedName(Prefix+"leaky_") for the leaky one.
	// Empty means "distlock_procs_".
	Prefix string

	// DSN returns the DSN of the run whose storage is named name. It runs
	// in the parent and in each worker, and must return the same there.
	DSN func(t testing.TB, name string) string

	// Settings is the safe run's settings: Duration, TTL, Fenced, Majority,
	// PauseHolders. Open, Faults, Actions and Leftovers are set here.
	Settings conformance.Processes

	// Leftovers, in the parent process only, readies the storage of the
	// run named name (to be dropped when the test ends) and returns the
	// count of the locks held there, for conformance.Processes.Leftovers.
	Leftovers func(t *testing.T, name string) func(t *testing.T) int

	// Nemesis, if set, in the parent process only, sets the safe run's
	// faults: p's Faults, for a cluster's members, or Actions.
	Nemesis func(t *testing.T, name string, p *conformance.Processes)

	// After, if set, runs in the parent after the safe run, to check that
	// the backend recovered.
	After func(t *testing.T)

	// NoLeakyRun, if set, says why the leaky run does not apply, and skips
	// it. Without it, the leaky run shows that Leftovers counts what a
	// driver that never releases leaves behind.
	NoLeakyRun string
}

// Run runs the safe run in the subtest "safe", and requires it safe: no
// overlap, no token regression, no lost write, no lock left a TTL after
// the run. Then, in the subtest "leaky", it runs conformance.Leaky's
// variant of the driver and requires its leftovers seen.
func (r ProcessRuns) Run(t *testing.T) {
	r = r.ready(t)
	t.Run("safe", func(t *testing.T) {
		rep := conformance.RunProcesses(t, r.settings(t, conformance.SharedName(r.Prefix)))
		t.Log(rep)
		conformance.RequireSafe(t, rep)
		if r.After != nil && !conformance.InWorker() {
			r.After(t)
		}
	})
	t.Run("leaky", func(t *testing.T) {
		if r.NoLeakyRun != "" {
			t.Skip(r.NoLeakyRun)
		}
		name := conformance.SharedName(r.Prefix + "leaky_")
		connect := r.connector(r.DSN(t, name))
		var leftovers func(*testing.T) int
		if !conformance.InWorker() {
			leftovers = r.Leftovers(t, name)
		}
		conformance.RequireLeftoversSeen(t, connect, leftovers)
	})
}

// ready skips the test in -short mode, and fills in r's default prefix.
func (r ProcessRuns) ready(t *testing.T) ProcessRuns {
	t.Helper()
	if testing.Short() {
		t.Skip("runs worker processes and a nemesis")
	}
	if r.Prefix == "" {
		r.Prefix = "distlock_procs_"
	}
	return r
}

// settings returns r.Settings for a run in the namespace name: its clients
// open through a connector on that namespace and, in the parent test, the
// run counts the namespace's leftovers and deals r's nemesis.
func (r ProcessRuns) settings(t *testing.T, name string) conformance.Processes {
	connect := r.connector(r.DSN(t, name))
	p := r.Settings
	p.Open = func(t testing.TB) *lock.Client { return lock.OpenConnector(connect(t)) }
	if !conformance.InWorker() {
		p.Leftovers = r.Leftovers(t, name)
		if r.Nemesis != nil {
			r.Nemesis(t, name, &p)
		}
	}
	return p
}

// connector returns a function that opens a connector of the driver on
// dsn, failing the test if it cannot.
func (r ProcessRuns) connector(dsn string) func(t testing.TB) driver.Connector {
	return func(t testing.TB) driver.Connector {
		cn, err := r.Driver.OpenConnector(dsn)
		if err != nil {
			t.Fatal(err)
		}
		return cn
	}
}
