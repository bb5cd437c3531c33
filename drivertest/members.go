package drivertest

import (
	"net"
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
	"github.com/distlock/lock/internal/testenv"
)

// Members is a test cluster's members as processes, for fault tests: the
// servers that a scripts/services.d script started, one folder each,
// where the member's PID file is and where its process runs. Only a PID
// recorded there whose process runs in that folder is ever signalled. It
// implements conformance.Faults, and is safe for concurrent use.
type Members struct {
	name    string
	dirs    []string
	addrs   []string
	pidfile string
	start   func(dir string) *exec.Cmd
	ready   func(t *testing.T, i int)

	mu   sync.Mutex
	hung map[int]bool
}

var _ conformance.Faults = (*Members)(nil)

// MembersConfig describes a test cluster for [NewMembers].
type MembersConfig struct {
	// Name names a member in messages ("etcd member" for "etcd member 2").
	Name string

	// Dirs are the members' folders.
	Dirs []string

	// Addrs are the members' client addresses (host:port), in the order of
	// Dirs: a killed member is gone once its port is closed.
	Addrs []string

	// PIDFile is the name of the PID file in each member's folder.
	PIDFile string

	// Start returns the command that starts the member of folder dir again
	// with its data. The command returns once the member runs.
	Start func(dir string) *exec.Cmd

	// Ready waits until member i serves, after a restart or a resume, and
	// fails the test if it does not in time. Nil waits for nothing.
	Ready func(t *testing.T, i int)
}

// NewMembers returns the members cfg describes.
func NewMembers(cfg MembersConfig) *Members {
	return &Members{
		name: cfg.Name, dirs: cfg.Dirs, addrs: cfg.Addrs, pidfile: cfg.PIDFile,
		start: cfg.Start, ready: cfg.Ready, hung: make(map[int]bool),
	}
}

// Nodes returns the number of members.
func (m *Members) Nodes() int { return len(m.dirs) }

// Alive reports whether member i's process runs: recorded in its PID
// file, alive (not a zombie), with the member's folder as its cwd.
func (m *Members) Alive(i int) bool {
	_, ok := m.pid(i)
	return ok
}

// Hung reports whether member i is hung by [Members.Hang].
func (m *Members) Hung(i int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hung[i]
}

func (m *Members) pid(i int) (int, bool) { return ServerPID(m.dirs[i], m.pidfile) }

func (m *Members) signal(t testing.TB, i int, sig syscall.Signal) {
	t.Helper()
	pid, ok := m.pid(i)
	if !ok {
		t.Fatalf("%s %d is not running", m.name, i+1)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("signal %v to %s %d (pid %d): %v", sig, m.name, i+1, pid, err)
	}
}

// Kill kills member i with SIGKILL and waits until it is gone and its
// port closed (a process's threads can outlive its main one for a moment,
// with its sockets).
func (m *Members) Kill(t *testing.T, i int) {
	t.Helper()
	m.signal(t, i, syscall.SIGKILL)
	deadline := time.Now().Add(10 * time.Second)
	for m.Alive(i) || m.listening(i) {
		if time.Now().After(deadline) {
			t.Fatalf("%s %d outlived SIGKILL by 10s", m.name, i+1)
		}
		time.Sleep(10 * time.Millisecond)
	}
	m.mu.Lock()
	delete(m.hung, i)
	m.mu.Unlock()
}

// Hang stops member i with SIGSTOP, and waits until every thread of it
// has stopped. kill returns before that, and a thread still running on
// another core could answer a request sent just after: a "hung" MariaDB
// once granted a lock 1ms after its SIGSTOP.
func (m *Members) Hang(t *testing.T, i int) {
	t.Helper()
	m.mu.Lock()
	m.hung[i] = true // first: a Restart after a failed signal still resumes it
	m.mu.Unlock()
	m.signal(t, i, syscall.SIGSTOP)
	if pid, ok := m.pid(i); ok {
		waitStopped(t, pid)
	}
}

// waitStopped waits, for up to a second, until every thread of process
// pid is stopped (state T in /proc). Without /proc it returns at once.
func waitStopped(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for !allStopped(pid) {
		if time.Now().After(deadline) {
			t.Logf("pid %d: not every thread stopped within 1s of SIGSTOP", pid)
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// allStopped reports whether every thread of pid is stopped, or whether
// /proc cannot say.
func allStopped(pid int) bool {
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return true
	}
	for _, task := range tasks {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + task.Name() + "/stat")
		if err != nil {
			continue // the thread ended
		}
		// The state follows the command name, which is in parentheses.
		_, after, ok := strings.Cut(string(stat), ") ")
		if !ok || after == "" || (after[0] != 'T' && after[0] != 't') {
			return false
		}
	}
	return true
}

// Restart resumes member i if it is hung, or starts it again with its data
// if it is dead, and waits until it is ready.
func (m *Members) Restart(t *testing.T, i int) {
	t.Helper()
	m.mu.Lock()
	hung := m.hung[i]
	delete(m.hung, i)
	m.mu.Unlock()
	if m.Alive(i) {
		if hung {
			m.signal(t, i, syscall.SIGCONT)
		}
	} else {
		if m.listening(i) {
			t.Fatalf("%s %d is not running, but its port %s is taken: not restarting it", m.name, i+1, m.addrs[i])
		}
		if out, err := m.start(m.dirs[i]).CombinedOutput(); err != nil {
			t.Fatalf("restarting %s %d: %v\n%s", m.name, i+1, err, out)
		}
	}
	if m.ready != nil {
		m.ready(t, i)
	}
}

// listening reports whether something listens on member i's port.
func (m *Members) listening(i int) bool {
	c, err := net.DialTimeout("tcp", m.addrs[i], time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// HangAll stops every member of f with Hang, and when the test ends
// restarts them all and calls healthy, which waits until the cluster
// serves again.
func HangAll(t *testing.T, f conformance.Faults, healthy func(t testing.TB)) {
	t.Helper()
	t.Cleanup(func() {
		for i := range f.Nodes() {
			f.Restart(t, i)
		}
		healthy(t)
	})
	for i := range f.Nodes() {
		f.Hang(t, i)
	}
}

// MemberDirs returns the folders of n members, named prefix1, prefix2...
// in parent.
func MemberDirs(parent, prefix string, n int) []string {
	dirs := make([]string, n)
	for i := range dirs {
		dirs[i] = filepath.Join(parent, prefix+strconv.Itoa(i+1))
	}
	return dirs
}

// ServerPID returns the PID recorded in the file pidfile of dir if that
// process is alive (not a zombie) and runs in dir (its cwd): a server that
// scripts/services.sh started there, and so one a fault test may signal.
// Nothing else is ever a test's to signal.
func ServerPID(dir, pidfile string) (int, bool) { return testenv.ServerPID(dir, pidfile) }

// Timeouts are the timeouts of a cluster driver's test clients. An
// election on the test cluster must fit in Request, and Request in TTL,
// so that the suite's fault cases, with a majority broken, see attempts
// fail within a lock's TTL.
type Timeouts struct {
	Member  time.Duration // past it, a silent member is given up: member_timeout
	Request time.Duration // bounds an operation across members: request_timeout
	TTL     time.Duration // the conformance suite's TTL
}

// Params returns the DSN parameters of the timeouts (name, value...), for
// [Query]: member_timeout and request_timeout.
func (ts Timeouts) Params() []string {
	return []string{"member_timeout", ts.Member.String(), "request_timeout", ts.Request.String()}
}
