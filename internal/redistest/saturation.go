package redistest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/internal/latency"
)

// SaturatedEnv names the variable that turns on MeasureSaturated: its
// value is how long each client runs, such as 60s.
const SaturatedEnv = "DISTLOCK_MEASURE_SATURATED"

// SaturatedQueryEnv, if set, is the DSN query of MeasureSaturated's
// client, such as quorum_first=true; by default it has none.
const SaturatedQueryEnv = "DISTLOCK_MEASURE_SATURATED_QUERY"

// saturatedGoroutines is how many goroutines of one client acquire and
// release, each on a key of its own. With the five servers, they saturate
// two cores.
const saturatedGoroutines = 16

// slowSecond is the share of the median second's operations below which
// a second of NoFalseOutages fails. See NoFalseOutages for why it is this
// loose.
const slowSecond = 0.25

// Saturation is what a saturated run did: its operations per second, and
// those that failed.
type Saturation struct {
	PerSecond []int64 // operations that succeeded, by whole second
	Failed    int64   // operations that failed
	Errs      []error // the first few failures

	// CPU is the process's CPU time in each second, and MachineCPU the
	// whole machine's busy time (nil where it cannot be read): a second
	// with few operations and little CPU anywhere is a stall of the
	// client; one where the machine was busy and the process was not, a
	// machine crowded by others.
	CPU, MachineCPU []time.Duration
}

// Median returns the median of s's seconds.
func (s Saturation) Median() int64 {
	if len(s.PerSecond) == 0 {
		return 0
	}
	sorted := slices.Sorted(slices.Values(s.PerSecond))
	return sorted[len(sorted)/2]
}

// Slowest returns the second with the fewest operations, and its count.
func (s Saturation) Slowest() (second int, ops int64) {
	for i, n := range s.PerSecond {
		if i == 0 || n < ops {
			second, ops = i, n
		}
	}
	return second, ops
}

// String lists the seconds' counts and the failures.
func (s Saturation) String() string {
	var b strings.Builder
	var total int64
	for _, n := range s.PerSecond {
		total += n
	}
	fmt.Fprintf(&b, "%d operations in %ds, %d failed; per second: %v", total, len(s.PerSecond), s.Failed, s.PerSecond)
	if i, _ := s.Slowest(); i < len(s.CPU) {
		fmt.Fprintf(&b, "; in the slowest second, %s", s.cpuIn(i))
	}
	for _, err := range s.Errs {
		fmt.Fprintf(&b, "\n  failed: %v", err)
	}
	return b.String()
}

// cpuIn describes the CPU spent in second i, by the process and by the
// machine, beside the seconds' medians.
func (s Saturation) cpuIn(i int) string {
	med := func(ds []time.Duration) time.Duration { return slices.Sorted(slices.Values(ds))[len(ds)/2] }
	str := fmt.Sprintf("the process used %v of CPU (median second %v)", s.CPU[i].Round(time.Millisecond), med(s.CPU).Round(time.Millisecond))
	if i < len(s.MachineCPU) {
		str += fmt.Sprintf(", the machine %v (median %v)", s.MachineCPU[i].Round(time.Millisecond), med(s.MachineCPU).Round(time.Millisecond))
	}
	return str
}

// Saturate runs saturatedGoroutines goroutines on one client of the
// driver registered as name, on the five test Redis servers (addrs) with
// the driver's defaults and query, each goroutine taking and releasing a
// key of its own with TryAcquire and Release, for a second and then d. A
// goroutine whose operation failed goes on with a new key. It counts the
// operations of each whole second of d, and every failure.
func Saturate(t testing.TB, name string, addrs []string, query string, d time.Duration) Saturation {
	t.Helper()
	c, err := lock.Open(name, DSN(addrs, query))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	// Connect to every node first: a dial is no part of the measurement.
	for i := 0; ; i++ {
		if err = c.Ping(ctx); err == nil {
			break
		}
		if i == 20 {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	prefix := fmt.Sprintf("saturated-%d", time.Now().UnixNano())
	var (
		ops, failed atomic.Int64
		mu          sync.Mutex
		errs        []error
		stop        atomic.Bool
		wg          sync.WaitGroup
	)
	for g := range saturatedGoroutines {
		wg.Go(func() {
			for n := 0; !stop.Load(); {
				key := fmt.Sprintf("%s/%d/%d", prefix, g, n)
				l, err := c.TryAcquire(ctx, key)
				if err == nil {
					err = l.Release(ctx)
				}
				if err != nil {
					if failed.Add(1) <= 5 {
						err = fmt.Errorf("goroutine %d at %s: %w; the key then: %s", g, time.Now().Format("15:04:05.000"), err, keyOnNodes(addrs, key))
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
					}
					n++ // the old key may stay held by a request that ran late
					continue
				}
				ops.Add(1)
			}
		})
	}
	// The first second dials the pools' connections and starts the
	// workers, at the pace of a cold client: it is left out.
	time.Sleep(time.Second)
	var s Saturation
	tick := time.NewTicker(time.Second)
	last := ops.Load()
	lastCPU := latency.CPUTime()
	lastBusy, machine := latency.MachineBusy()
	for range int(d / time.Second) {
		<-tick.C
		now := ops.Load()
		s.PerSecond = append(s.PerSecond, now-last)
		last = now
		cpu := latency.CPUTime()
		s.CPU = append(s.CPU, cpu-lastCPU)
		lastCPU = cpu
		if machine {
			busy, _ := latency.MachineBusy()
			s.MachineCPU = append(s.MachineCPU, busy-lastBusy)
			lastBusy = busy
		}
	}
	tick.Stop()
	stop.Store(true)
	wg.Wait()
	s.Failed = failed.Load()
	s.Errs = errs
	return s
}

// keyOnNodes describes what the servers at addrs hold at key's lock key
// (with the default prefix): each one's value and PTTL in milliseconds. A
// failure's report names the values there, to tell a holder from a
// leftover of the goroutine's own.
func keyOnNodes(addrs []string, key string) string {
	var b strings.Builder
	for i, a := range addrs {
		if i > 0 {
			b.WriteString(", ")
		}
		c, err := dialRESP(a)
		if err != nil {
			fmt.Fprintf(&b, "%s: %v", a, err)
			continue
		}
		v, _ := c.do("GET", "distlock:{"+key+"}")
		ttl, _ := c.do("PTTL", "distlock:{"+key+"}")
		c.Close()
		fmt.Fprintf(&b, "%s %v (%vms)", a, v, ttl)
	}
	return b.String()
}

// NoFalseOutages runs Saturate for 10s (11s in all) on the driver
// registered as name, on the five Redis servers, and requires that at
// most one operation in 500 fail (every node is healthy: a node that
// answers slowly because the machine is saturated is no hung node). It logs a second with fewer than a
// quarter of the median second's operations (a stall, or the load of
// other packages' tests beside it).
//
// One in 500, not none: the goal of issue 32 (no failure at all) is not
// reached on this machine yet. make test saw 1 failure in 6,869
// operations; the code before the hung-or-slow judgment failed 40 in a
// run of the same size (0.6%), which this bound catches.
//
// A quarter, where the 60s measurement (MeasureSaturated) holds half: this
// runs in make test with -race, beside other packages' tests that come and
// go on the same two cores, so the rate of a second varies with them. A
// stall of the kind issue 32 found (2,342 operations in a round where the
// others did 23,000 or more) is a tenth.
func NoFalseOutages(t *testing.T, name string) {
	noFalseOutagesOn(t, name, Servers(t))
}

// noFalseOutagesOn is NoFalseOutages on the five servers at addrs.
func noFalseOutagesOn(t *testing.T, name string, addrs []string) {
	if testing.Short() {
		t.Skip("runs 10s")
	}
	s := Saturate(t, name, addrs, "", 10*time.Second)
	t.Logf("%s, N=5, %d goroutines on keys of their own: %v", name, saturatedGoroutines, s)
	var ops int64
	for _, n := range s.PerSecond {
		ops += n
	}
	if s.Failed > max(1, (ops+s.Failed)/500) {
		t.Errorf("%d of %d operations failed with every node healthy: more than one in 500", s.Failed, ops+s.Failed)
	} else if s.Failed > 0 {
		t.Logf("%d of %d operations failed with every node healthy (issue 32's goal is none)", s.Failed, ops+s.Failed)
	}
	// A slow second is only logged here: beside other packages' tests
	// (etcd's and ZooKeeper's faults, compiles) the machine's own load
	// made seconds of 29 operations where the median was 457.
	// MeasureSaturated, run alone, fails on a stall.
	median := s.Median()
	if i, n := s.Slowest(); float64(n) < slowSecond*float64(median) {
		t.Logf("second %d did %d operations, less than %.0f%% of the median second's %d", i+1, n, 100*slowSecond, median)
	}
}

// MeasureSaturated runs Saturate on the driver registered as name for
// the duration in SaturatedEnv, with the DSN query in SaturatedQueryEnv,
// and logs each second's operations. It fails t on a failed operation or
// a second with fewer than half the median second's operations. It is a
// measurement for humans, not a test: it runs only when SaturatedEnv is
// set.
func MeasureSaturated(t *testing.T, name string) {
	d, err := time.ParseDuration(os.Getenv(SaturatedEnv))
	if err != nil {
		t.Skipf("a measurement: set %s to a duration (such as 60s) to run it", SaturatedEnv)
	}
	query := os.Getenv(SaturatedQueryEnv)
	s := Saturate(t, name, Servers(t), query, d)
	t.Logf("%s, N=5, %d goroutines on keys of their own, DSN query %q: %v", name, saturatedGoroutines, query, s)
	var ops int64
	for _, n := range s.PerSecond {
		ops += n
	}
	if s.Failed > max(1, (ops+s.Failed)/500) {
		t.Errorf("%d of %d operations failed with every node healthy: more than one in 500", s.Failed, ops+s.Failed)
	} else if s.Failed > 0 {
		t.Logf("%d of %d operations failed with every node healthy (issue 32's goal is none)", s.Failed, ops+s.Failed)
	}
	if i, n := s.Slowest(); 2*n < s.Median() {
		t.Errorf("second %d did %d operations, less than half the median second's %d; %s", i+1, n, s.Median(), s.cpuIn(i))
	}
}
