package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distlock/lock/internal/latency"
)

var (
	faultOps        = flag.Int("fault.ops", 10000, "acquire+release operations per implementation of ours in TestHungMinority")
	faultEnabled    = flag.Bool("fault", false, "run TestHungMinority, a measurement of minutes (make test leaves it out)")
	faultRedsyncOps = flag.Int("fault.redsync-ops", 3, "operations per implementation of redsync in TestHungMinority (each takes seconds, or forever)")
)

// hang stops the Redis servers at addrs with SIGSTOP, and resumes them
// with SIGCONT when the test ends, whatever happens. A watchdog process of
// its own resumes them too, after the longest a test may last, should this
// test binary die without running its cleanups (a panic, a -timeout).
func hang(t *testing.T, addrs []string) {
	t.Helper()
	dir := os.Getenv("DISTLOCK_SERVICES_DIR")
	if dir == "" {
		t.Skip("DISTLOCK_SERVICES_DIR is not set: run `eval \"$(scripts/services.sh env)\"`")
	}
	var pids []string
	for _, a := range addrs {
		port := a[strings.LastIndexByte(a, ':')+1:]
		b, err := os.ReadFile(filepath.Join(dir, "redis-"+port, "redis.pid"))
		if err != nil {
			t.Fatalf("redis %s: %v", a, err)
		}
		pid := strings.TrimSpace(string(b))
		if _, err := strconv.Atoi(pid); err != nil {
			t.Fatalf("redis %s: pidfile holds %q", a, pid)
		}
		pids = append(pids, pid)
	}
	watchdog := exec.Command("sh", "-c", "sleep 900; kill -CONT "+strings.Join(pids, " "))
	watchdog.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // so that its sleep goes with it
	if err := watchdog.Start(); err != nil {
		t.Fatalf("watchdog: %v", err)
	}
	t.Cleanup(func() {
		for _, p := range pids {
			pid, _ := strconv.Atoi(p)
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Errorf("SIGCONT redis pid %d: %v", pid, err)
			}
		}
		syscall.Kill(-watchdog.Process.Pid, syscall.SIGKILL)
		watchdog.Wait()
	})
	for _, p := range pids {
		pid, _ := strconv.Atoi(p)
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatalf("SIGSTOP redis pid %d: %v", pid, err)
		}
	}
	t.Logf("hung %s (pids %s)", strings.Join(addrs, ", "), strings.Join(pids, ", "))
}

// faultRun is what one implementation did with a minority of nodes hung.
type faultRun struct {
	ops, failed                int
	lat                        []time.Duration // sorted
	before, max, after         int             // goroutines
	settled                    int             // goroutines after settleTime
	settleTime                 time.Duration   // until goroutines were back to before+2, or 10s
	firstHalfMax, lastTenthMax int             // the most goroutines seen in the first half and the last tenth
	blocked                    bool            // an operation did not end within the watchdog's time
}

func (r faultRun) String() string {
	s := fmt.Sprintf("%d ops, %d failed; latency p50 %v p99 %v max %v; goroutines before %d, max %d (first half %d, last tenth %d), right after %d, settled %d after %v",
		r.ops, r.failed, latency.Percentile(r.lat, 0.5), latency.Percentile(r.lat, 0.99), latency.Percentile(r.lat, 1), r.before, r.max, r.firstHalfMax, r.lastTenthMax, r.after, r.settled, r.settleTime.Round(time.Millisecond))
	if r.blocked {
		s += "; an operation was still blocked when the test gave up on it"
	}
	return s
}

// runFaulty runs ops acquire+release operations of m one after another,
// each under a watchdog of perOp, and counts goroutines.
func runFaulty(m mutex, ops int, perOp time.Duration) faultRun {
	r := faultRun{ops: ops, before: runtime.NumGoroutine()}
	lat := make([]time.Duration, 0, ops)
	for i := range ops {
		start := time.Now()
		done := make(chan error, 1)
		go func() {
			ctx := context.Background()
			err := m.lock(ctx)
			if err == nil {
				err = m.unlock(ctx)
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				r.failed++
			}
		case <-time.After(perOp):
			r.blocked = true
			r.ops = i + 1
			lat = append(lat, time.Since(start))
			slices.Sort(lat)
			r.lat = lat
			r.after = runtime.NumGoroutine()
			return r
		}
		lat = append(lat, time.Since(start))
		g := runtime.NumGoroutine()
		r.max = max(r.max, g)
		if i < ops/2 {
			r.firstHalfMax = max(r.firstHalfMax, g)
		}
		if i >= ops-max(1, ops/10) {
			r.lastTenthMax = max(r.lastTenthMax, g)
		}
	}
	r.after = runtime.NumGoroutine()
	slices.Sort(lat)
	r.lat = lat
	return r
}

// TestHungMinority hangs 2 of 5 nodes and runs acquire+release with each
// implementation's default settings: ours -fault.ops times (the
// acceptance: p99 under 50ms, and goroutines that do not grow), redsync
// -fault.redsync-ops times.
func TestHungMinority(t *testing.T) {
	if !*faultEnabled {
		t.Skip("a measurement of minutes that leaves redsync's hung calls behind: run it with -fault")
	}
	addrs := servers(t)
	for _, name := range impls {
		if slices.Max(nodeCounts(name)) == 1 {
			continue // one deployment: no minority of servers to hang
		}
		t.Run(name, func(t *testing.T) {
			im := newImpl(t, name, addrs) // warmed up: connections to every node
			m := im.mutex("bench/hung-minority/" + name + "/" + strconv.FormatInt(time.Now().UnixNano(), 36))
			ops, perOp := *faultOps, 10*time.Second
			if strings.HasPrefix(name, "redsync") {
				ops, perOp = *faultRedsyncOps, 30*time.Second
			}
			if strings.HasPrefix(name, "ours") {
				// At full speed when the nodes hang, as a client in use is:
				// its nodes' round-trip estimates are then their own, not
				// their first requests' (which include a dial), and bound how
				// soon a silent node is suspect. The last release's requests
				// to the nodes beyond its quorum land before the hang.
				runFaulty(m, 1000, perOp)
				time.Sleep(100 * time.Millisecond)
			}
			hang(t, addrs[3:5])
			r := runFaulty(m, ops, perOp)
			// Let the requests still out to the hung nodes time out: ours
			// under the node timeout, go-redis's dials (which it runs
			// detached from the request) under its dial timeout, 5s.
			settle := time.Now()
			for r.settled = runtime.NumGoroutine(); r.settled > r.before+2 && time.Since(settle) < 10*time.Second; r.settled = runtime.NumGoroutine() {
				time.Sleep(100 * time.Millisecond)
			}
			r.settleTime = time.Since(settle)
			t.Logf("%s with 2 of 5 nodes hung: %v", name, r)
			if strings.HasPrefix(name, "ours") {
				if p99 := latency.Percentile(r.lat, 0.99); p99 >= 50*time.Millisecond {
					t.Errorf("p99 %v, want under 50ms", p99)
				}
				if r.failed > 0 {
					t.Errorf("%d of %d operations failed", r.failed, r.ops)
				}
				// Requests to the hung nodes keep goroutines waiting for up
				// to the node timeout: their number follows the rate of
				// operations, and must not climb through the run.
				if r.settled > r.before+2 || r.lastTenthMax > r.firstHalfMax+r.firstHalfMax/2 {
					var b strings.Builder
					pprof.Lookup("goroutine").WriteTo(&b, 1)
					t.Errorf("goroutines grew: %v\n%s", r, b.String())
				}
			}
		})
	}
}
