//go:build unix

package benchmark

import (
	"context"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// redisServer returns the path of redis-server, skipping the test without
// it (failing it under CI) or with -short.
func redisServer(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts redis-server processes: not with -short")
	}
	path, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server is not in PATH, and CI is set: scripts/services.sh up installs it")
		}
		t.Skip("redis-server is not in PATH: scripts/services.sh up installs it")
	}
	return path
}

// freeBase returns the first of HungNodeCount consecutive free ports,
// chosen at random, so that tests run at the same time do not collide.
func freeBase(t *testing.T) int {
	t.Helper()
next:
	for range 50 {
		base := 20000 + rand.IntN(20000)
		for p := base; p < base+HungNodeCount; p++ {
			if portUsable(p) != nil {
				continue next
			}
		}
		return base
	}
	t.Fatal("found no free ports")
	return 0
}

// gone reports whether no process has pid (a zombie counts as one).
func gone(pid int) bool { return syscall.Kill(pid, 0) == syscall.ESRCH }

// nodesOn returns the PIDs of the redis-server processes on ports base to
// base+HungNodeCount-1, as /proc shows their command lines: "redis-server
// 127.0.0.1:PORT" once the server has set its title, "... --port PORT"
// before.
func nodesOn(t *testing.T, base int) []int {
	t.Helper()
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range procs {
		b, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(b), "redis-server") {
			continue
		}
		cmdline := strings.ReplaceAll(string(b), "\x00", " ")
		for p := base; p < base+HungNodeCount; p++ {
			if strings.Contains(cmdline, "127.0.0.1:"+strconv.Itoa(p)+" ") || strings.HasSuffix(cmdline, "127.0.0.1:"+strconv.Itoa(p)) ||
				strings.Contains(cmdline, "--port "+strconv.Itoa(p)+" ") {
				pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

func TestStartNodes_stopLeavesNoProcess(t *testing.T) {
	server := redisServer(t)
	base := freeBase(t)
	ns, err := StartNodes(t.Context(), server, base, HungNodeCount)
	if err != nil {
		t.Fatal(err)
	}
	pids := ns.PIDs()
	if got := nodesOn(t, base); len(got) != HungNodeCount {
		t.Errorf("%d nodes running (%v), want %d", len(got), got, HungNodeCount)
	}
	for i := HungNodeCount - HungCount; i < HungNodeCount; i++ {
		if err := ns.Hang(i); err != nil {
			t.Fatal(err)
		}
	}
	// A hung node accepts connections (the kernel does) but answers nothing.
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if ping(ctx, ns.Addrs()[HungNodeCount-1]) {
		t.Error("a hung node answered PING")
	}
	if !ping(t.Context(), ns.Addrs()[0]) {
		t.Error("a node that is not hung did not answer PING")
	}
	if err := ns.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if !gone(pid) {
			t.Errorf("redis-server pid %d still there after Stop", pid)
		}
	}
	if got := nodesOn(t, base); len(got) != 0 {
		t.Errorf("redis-server processes left on our ports: %v", got)
	}
	if err := ns.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if err := ns.Hang(0); err == nil {
		t.Error("Hang after Stop succeeded")
	}
}

func TestStartNodes_freePortsWhenNoBase(t *testing.T) {
	server := redisServer(t)
	ns, err := StartNodes(t.Context(), server, 0, HungNodeCount)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Stop()
	seen := map[int]bool{}
	for _, a := range ns.Addrs() {
		p := portOf(a)
		if p == 6379 || seen[p] || !strings.HasPrefix(a, "127.0.0.1:") {
			t.Errorf("addresses %v: want %d distinct loopback ports, never 6379", ns.Addrs(), HungNodeCount)
		}
		seen[p] = true
		if !ping(t.Context(), a) {
			t.Errorf("the node on %s does not answer", a)
		}
	}
	pids := ns.PIDs()
	if err := ns.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if !gone(pid) {
			t.Errorf("redis-server pid %d still there after Stop", pid)
		}
	}
}

func TestStartNodes_refusesPortsNotOurs(t *testing.T) {
	server := redisServer(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	for _, base := range []int{6379 - 2, taken} {
		ns, err := StartNodes(t.Context(), server, base, HungNodeCount)
		if err == nil {
			ns.Stop()
			t.Errorf("StartNodes on ports %d-%d succeeded", base, base+HungNodeCount-1)
		}
	}
	if _, err := StartNodes(t.Context(), "no-such-redis-server", 20000, 1); err == nil || !strings.Contains(err.Error(), "scripts/services.sh up") {
		t.Errorf("StartNodes of a missing binary: %v", err)
	}
	if got := nodesOn(t, taken); len(got) != 0 {
		t.Errorf("redis-server processes left: %v", got)
	}
}

func TestRun_hungNodesStoppedWhenInterrupted(t *testing.T) {
	server := redisServer(t)
	base := freeBase(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// Interrupt during the hung measurement, once bench's nodes run.
	p := NewProgress(cancelWhen{"nodes hung", func() {
		if len(nodesOn(t, base)) != HungNodeCount {
			t.Errorf("bench's nodes are not running during the hung measurement")
		}
		time.AfterFunc(100*time.Millisecond, cancel)
	}}, false)
	r := Run(ctx, hungPlan(t, server, base), p)
	if !r.Interrupted || len(r.Rows) != 1 || r.Rows[0].Hung == nil || r.Rows[0].Hung.Ops == 0 {
		t.Fatalf("report %+v", r)
	}
	if got := nodesOn(t, base); len(got) != 0 {
		t.Errorf("redis-server processes left after an interrupted run: %v", got)
	}
}

// hungPlan is a plan for goredis on nodes the test starts itself (so that
// it needs no test servers), with the hung measurement on base.
func hungPlan(t *testing.T, server string, base int) Plan {
	t.Helper()
	own, err := StartNodes(t.Context(), server, freeBase(t), HungNodeCount)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { own.Stop() })
	return Plan{Targets: []Target{{Driver: "goredis", DSN: own.DSN()}}, Duration: 200 * time.Millisecond,
		Hold: time.Millisecond, RedisServer: server, HungBasePort: base}
}

// cancelWhen is a writer that calls f, once, when it is written text
// containing when.
type cancelWhen struct {
	when string
	f    func()
}

func (c cancelWhen) Write(p []byte) (int, error) {
	if strings.Contains(string(p), c.when) {
		c.f()
	}
	return len(p), nil
}
