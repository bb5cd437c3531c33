package zookeeper_test

import (
	"bufio"
	"fmt"
	"net"
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

// ensemble is the test ensemble's members as processes, for the fault
// tests: scripts/services.d/zookeeper.sh keeps member i's JVM PID in
// $DISTLOCK_SERVICES_DIR/zookeeper/zk<i+1>/zookeeper.pid and starts it with
// the start launcher there. Only a PID recorded there whose process runs in
// that dir is ever signalled. It implements conformance.Faults.
type ensemble struct {
	dir   string
	addrs []string

	mu   sync.Mutex
	hung map[int]bool
}

var _ conformance.Faults = (*ensemble)(nil)

// theEnsemble returns the test ensemble, skipping the test without it.
func theEnsemble(t testing.TB) *ensemble {
	t.Helper()
	addrs := servers(t)
	dir := testenv.Lookup(t, "DISTLOCK_SERVICES_DIR")
	return &ensemble{dir: filepath.Join(dir, "zookeeper"), addrs: addrs, hung: make(map[int]bool)}
}

func (e *ensemble) Nodes() int { return len(e.addrs) }

func (e *ensemble) memberDir(i int) string { return filepath.Join(e.dir, "zk"+strconv.Itoa(i+1)) }

// pid returns member i's PID if its process is alive (not a zombie) and
// ours: recorded in its pidfile, with the member's dir as its cwd.
func (e *ensemble) pid(i int) (int, bool) {
	return testenv.ServerPID(e.memberDir(i), "zookeeper.pid")
}

func (e *ensemble) signal(t testing.TB, i int, sig syscall.Signal) {
	t.Helper()
	pid, ok := e.pid(i)
	if !ok {
		t.Fatalf("zookeeper member %d is not running", i+1)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("signal %v to zookeeper member %d (pid %d): %v", sig, i+1, pid, err)
	}
}

// Kill kills member i with SIGKILL and waits until it is gone.
func (e *ensemble) Kill(t *testing.T, i int) {
	t.Helper()
	e.signal(t, i, syscall.SIGKILL)
	deadline := time.Now().Add(10 * time.Second)
	for {
		// Gone, and its port closed: a JVM's threads outlive its main one
		// for a moment, with its sockets.
		if _, ok := e.pid(i); !ok && !e.listening(i) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("zookeeper member %d outlived SIGKILL by 10s", i+1)
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.mu.Lock()
	delete(e.hung, i)
	e.mu.Unlock()
}

// Hang stops member i with SIGSTOP.
func (e *ensemble) Hang(t *testing.T, i int) {
	t.Helper()
	e.mu.Lock()
	e.hung[i] = true // first: a Restart after a failed signal still continues it
	e.mu.Unlock()
	e.signal(t, i, syscall.SIGSTOP)
}

// Restart resumes member i if it is hung, or starts it again with its data
// if it is dead, and waits until it serves.
func (e *ensemble) Restart(t *testing.T, i int) {
	t.Helper()
	e.mu.Lock()
	hung := e.hung[i]
	delete(e.hung, i)
	e.mu.Unlock()
	if _, ok := e.pid(i); ok {
		if hung {
			e.signal(t, i, syscall.SIGCONT)
		}
		e.serving(t, i, 30*time.Second)
		return
	}
	if e.listening(i) {
		t.Fatalf("zookeeper member %d is not running, but its port %s is taken: not restarting it", i+1, e.addrs[i])
	}
	cmd := exec.Command(filepath.Join(e.memberDir(i), "start"))
	cmd.Dir = e.memberDir(i)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("restarting zookeeper member %d: %v\n%s", i+1, err, out)
	}
	e.serving(t, i, 30*time.Second)
}

// serving waits until member i runs and serves in a quorum, if the
// members it needs for one run.
func (e *ensemble) serving(t testing.TB, i int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		_, alive := e.pid(i)
		if !alive {
			t.Fatalf("zookeeper member %d is not running", i+1)
		}
		if m := e.mode(i); m == "leader" || m == "follower" {
			return
		}
		e.mu.Lock()
		others := 0
		for j := range e.addrs {
			if _, ok := e.pid(j); ok && j != i && !e.hung[j] {
				others++
			}
		}
		e.mu.Unlock()
		if others+1 <= len(e.addrs)/2 {
			return // no quorum to join yet: the suite restarts the others next
		}
		if time.Now().After(deadline) {
			t.Fatalf("zookeeper member %d not serving %v after its restart", i+1, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// listening reports whether something listens on member i's client port.
func (e *ensemble) listening(i int) bool {
	c, err := net.DialTimeout("tcp", e.addrs[i], time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// mode returns member i's role, from the srvr four-letter command, or ""
// if it does not serve.
func (e *ensemble) mode(i int) string {
	c, err := net.DialTimeout("tcp", e.addrs[i], time.Second)
	if err != nil {
		return ""
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	fmt.Fprint(c, "srvr")
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(sc.Text(), "Mode: "); ok {
			return m
		}
	}
	return ""
}

// healthy waits until every member runs and serves, in a quorum.
func (e *ensemble) healthy(t testing.TB, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for i := range e.addrs {
		for {
			_, alive := e.pid(i)
			m := e.mode(i)
			if alive && (m == "leader" || m == "follower") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("zookeeper member %d (%s) not serving within %v (alive %v, mode %q)", i+1, e.addrs[i], d, alive, m)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}
