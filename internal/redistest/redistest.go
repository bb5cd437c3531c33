// Package redistest gives the Redlock drivers' tests the Redis servers
// that scripts/services.sh runs, and a conformance.Faults over them that
// kills (SIGKILL), hangs (SIGSTOP) and restarts them.
package redistest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/drivertest"
	"github.com/distlock/lock/internal/testenv"
)

// A Set is one of the two groups of five test servers that
// scripts/services.sh runs: Redis's and Valkey's. Each has a lock of its
// own (testenv.Redis, testenv.Valkey), so that the packages that break one
// group run beside those that break the other.
type Set struct {
	kind string // its dirs are KIND-PORT, its pidfiles KIND.pid; services.sh start-KIND restarts it
}

var (
	// Redis is the Redis servers: the goredis and redigo drivers' tests, and
	// every other package's that needs Redis, run on them.
	Redis = Set{"redis"}

	// Valkey is the Valkey servers: the rueidis and valkey drivers' tests
	// run on them, faults included.
	Valkey = Set{"valkey"}
)

// Addrs returns the addresses of s's servers, skipping the test (failing
// it under CI) when they are not running.
func (s Set) Addrs(t testing.TB) []string {
	t.Helper()
	if s.kind == "valkey" {
		return testenv.ValkeyAddrs(t)
	}
	return testenv.RedisAddrs(t)
}

// Lock is the testenv lock that a package holds while it uses s's servers.
func (s Set) Lock() testenv.Servers {
	if s.kind == "valkey" {
		return testenv.Valkey
	}
	return testenv.Redis
}

// Servers returns the addresses of the test Redis servers, skipping the
// test (failing it under CI) when they are not running.
func Servers(t testing.TB) []string {
	t.Helper()
	return Redis.Addrs(t)
}

// ValkeyServers returns the addresses of the test Valkey servers, skipping
// the test (failing it under CI) when they are not running.
func ValkeyServers(t testing.TB) []string {
	t.Helper()
	return Valkey.Addrs(t)
}

// DSN returns a DSN of redis:// URLs for addrs, with query (may be empty)
// on the first.
func DSN(addrs []string, query string) string {
	urls := make([]string, len(addrs))
	for i, a := range addrs {
		urls[i] = "redis://" + a
	}
	if query != "" {
		urls[0] += "?" + query
	}
	return strings.Join(urls, ",")
}

// Exclusive runs the tests of a package while holding an exclusive lock
// on the shared Redis servers (testenv.Redis), so that one package's fault
// tests (which kill and hang servers) never run beside another package's
// tests. Use it in TestMain.
func Exclusive(m *testing.M) int {
	release, err := testenv.Hold(testenv.Redis)
	if err != nil {
		fmt.Fprintln(os.Stderr, "redistest:", err)
		return 1
	}
	defer release()
	return m.Run()
}

// Faults kills, hangs and restarts the servers of a Set, by the PIDs in
// their pidfiles. Restarting a killed server runs `scripts/services.sh
// start-redis` (start-valkey), which brings it back empty and starts
// nothing else.
type Faults struct {
	kind  string
	addrs []string
	dir   string

	mu   sync.Mutex
	hung map[int]bool // stopped by Hang
}

var _ conformance.Faults = (*Faults)(nil)

// NewFaults returns Faults over the first n test Redis servers.
func NewFaults(t testing.TB, n int) *Faults {
	t.Helper()
	return Redis.Faults(t, n)
}

// Faults returns Faults over the first n servers of s.
func (s Set) Faults(t testing.TB, n int) *Faults {
	t.Helper()
	addrs := s.Addrs(t)
	if len(addrs) < n {
		t.Fatalf("%d %s servers, want %d", len(addrs), s.kind, n)
	}
	return &Faults{
		kind:  s.kind,
		addrs: addrs[:n],
		dir:   testenv.Lookup(t, "DISTLOCK_SERVICES_DIR"),
		hung:  make(map[int]bool),
	}
}

// Nodes returns the number of servers.
func (f *Faults) Nodes() int { return len(f.addrs) }

func (f *Faults) pid(t *testing.T, i int) int {
	t.Helper()
	port := f.addrs[i][strings.LastIndexByte(f.addrs[i], ':')+1:]
	b, err := os.ReadFile(filepath.Join(f.dir, f.kind+"-"+port, f.kind+".pid"))
	if err != nil {
		t.Fatalf("%s %s: %v", f.kind, f.addrs[i], err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s %s: pidfile: %v", f.kind, f.addrs[i], err)
	}
	return pid
}

func (f *Faults) signal(t *testing.T, i int, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(f.pid(t, i), sig); err != nil {
		t.Fatalf("%s %s: %v: %v", f.kind, f.addrs[i], sig, err)
	}
}

// alive reports whether server i's process runs (a zombie does not).
func (f *Faults) alive(t *testing.T, i int) (pid int, ok bool) {
	pid = f.pid(t, i)
	if syscall.Kill(pid, 0) != nil {
		return pid, false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return pid, err == nil && !strings.Contains(string(b), ") Z ")
}

// Kill kills server i and waits until it is gone.
func (f *Faults) Kill(t *testing.T, i int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pid, ok := f.alive(t, i)
	if !ok {
		return
	}
	syscall.Kill(pid, syscall.SIGKILL)
	syscall.Kill(pid, syscall.SIGCONT) // lets a stopped process die
	f.hung[i] = false
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, ok := f.alive(t, i); !ok {
			return
		}
	}
	t.Fatalf("%s %s: still running 10s after SIGKILL", f.kind, f.addrs[i])
}

// Hang stops server i with SIGSTOP.
func (f *Faults) Hang(t *testing.T, i int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hung[i] {
		return
	}
	f.signal(t, i, syscall.SIGSTOP)
	f.hung[i] = true
}

// Restart resumes a hung server, or starts a killed one again, empty
// (with every other killed one: scripts/services.sh up starts them all).
func (f *Faults) Restart(t *testing.T, i int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hung[i] {
		f.signal(t, i, syscall.SIGCONT)
		f.hung[i] = false
		return
	}
	if _, ok := f.alive(t, i); ok {
		return
	}
	for j := range f.hung {
		if f.hung[j] {
			t.Fatalf("%s %s: cannot restart servers while %s is hung", f.kind, f.addrs[i], f.addrs[j])
		}
	}
	if out, err := exec.Command(drivertest.ServicesScript(t), "start-"+f.kind).CombinedOutput(); err != nil {
		t.Fatalf("services.sh start-%s: %v\n%s", f.kind, err, out)
	}
}
