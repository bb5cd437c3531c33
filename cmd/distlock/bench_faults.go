package main

import (
	"os"
	"path/filepath"
	"time"

	"github.com/distlock/lock/cmd/distlock/internal/benchmark"
)

// benchFaults are bench's flags of the faults section.
type benchFaults struct {
	on         bool
	serversDir string
	before     time.Duration
	limit      time.Duration
}

// benchFaultsAbout is the faults section's paragraph of bench's help.
const benchFaultsAbout = `With --faults, bench adds a faults section: for each networked backend, 4
goroutines run TryAcquire+Release on keys of their own for a few seconds,
then one fault that fits the backend: one of several members killed (the
leader, where it tells), started again at the end; or a lone server killed
and started again at once. The load goes on until the rate is back, or
--faults-limit. The table gives the failures by class, the longest time in
which no acquisition succeeded, and the time back to the rate. Bench kills
only the servers that --servers-dir DIR hands it, in DIR/faults/DRIVER
(scripts/services.sh writes them in its state dir), and only those the DSN
names; a backend without a file gets a note, and no fault.`

// register adds the flags to c.
func (f *benchFaults) register(c *command) {
	c.fs.BoolVar(&f.on, "faults", false, "add the faults section (needs --servers-dir)")
	c.fs.StringVar(&f.serversDir, "servers-dir", "", "the folder `DIR` whose faults/DRIVER files name the servers bench may kill, and how to start them again ($DISTLOCK_SERVICES_DIR for the test servers)")
	c.fs.DurationVar(&f.before, "faults-before", 3*time.Second, "the load's length `T` before each fault")
	c.fs.DurationVar(&f.limit, "faults-limit", 15*time.Second, "the longest `T` the load goes on after a fault, waiting for the rate to come back")
}

// check checks the flags once parsed.
func (f *benchFaults) check() error {
	switch {
	case !f.on && f.serversDir != "":
		return failure(exitUsage, "--servers-dir: only with --faults")
	case !f.on:
		return nil
	case f.serversDir == "":
		return failure(exitUsage, "--faults: give --servers-dir DIR, the servers bench may kill (scripts/services.sh's state dir)")
	case f.before < time.Second || f.before > time.Minute:
		return failure(exitUsage, "--faults-before %v: want 1s to 1m (the rate before the fault is a median of 1s windows)", f.before)
	case f.limit < time.Second || f.limit > 10*time.Minute:
		return failure(exitUsage, "--faults-limit %v: want 1s to 10m", f.limit)
	}
	dir, err := filepath.Abs(f.serversDir)
	if err != nil {
		return failure(exitUsage, "--servers-dir: %v", err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return failure(exitUsage, "--servers-dir %s: not a folder", f.serversDir)
	}
	f.serversDir = dir
	return nil
}

// plan returns the faults section's plan, nil without --faults.
func (f *benchFaults) plan() *benchmark.FaultPlan {
	if !f.on {
		return nil
	}
	return &benchmark.FaultPlan{ServersDir: f.serversDir, Before: f.before, Limit: f.limit}
}

// benchFaultsFailed reports whether a fault failed, or left a server
// killed and not running again.
func benchFaultsFailed(r *benchmark.Report) bool {
	for _, fr := range r.Faults {
		if fr.Error != "" || !fr.Restored {
			return true
		}
	}
	return false
}
