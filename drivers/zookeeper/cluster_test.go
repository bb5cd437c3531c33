package zookeeper_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivertest"
)

// ensemble is the test ensemble's members as processes, for the fault
// tests: scripts/services.d/zookeeper.sh keeps member i's JVM PID in
// $DISTLOCK_SERVICES_DIR/zookeeper/zk<i+1>/zookeeper.pid and starts it with
// the start launcher there. It implements conformance.Faults.
type ensemble struct {
	*drivertest.Members
	addrs []string
}

// theEnsemble returns the test ensemble, skipping the test without it.
func theEnsemble(t testing.TB) *ensemble {
	t.Helper()
	e := &ensemble{addrs: servers(t)}
	e.Members = drivertest.NewMembers(drivertest.MembersConfig{
		Name:    "zookeeper member",
		Dirs:    drivertest.MemberDirs(filepath.Join(drivertest.ServicesDir(t), "zookeeper"), "zk", len(e.addrs)),
		Addrs:   e.addrs,
		PIDFile: "zookeeper.pid",
		Start: func(dir string) *exec.Cmd {
			cmd := exec.Command(filepath.Join(dir, "start"))
			cmd.Dir = dir
			return cmd
		},
		Ready: func(t *testing.T, i int) { e.serving(t, i, 30*time.Second) },
	})
	return e
}

// serving waits until member i runs and serves in a quorum, if the
// members it needs for one run.
func (e *ensemble) serving(t testing.TB, i int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		if !e.Alive(i) {
			t.Fatalf("zookeeper member %d is not running", i+1)
		}
		if m := e.mode(i); m == "leader" || m == "follower" {
			return
		}
		others := 0
		for j := range e.addrs {
			if j != i && e.Alive(j) && !e.Hung(j) {
				others++
			}
		}
		if others+1 <= len(e.addrs)/2 {
			return // no quorum to join yet: the suite restarts the others next
		}
		if time.Now().After(deadline) {
			t.Fatalf("zookeeper member %d not serving %v after its restart", i+1, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
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

// settle is how long a resumed or restarted ensemble may still fall
// apart: twice its sync limit (10 ticks of 100ms). A member resumed from
// SIGSTOP answers srvr with its old role at once; the leader finds its
// followers out of sync only a sync limit later, and the ensemble elects
// again. make test once saw three tests, each begun after healthy had
// passed, find no member granting a session for seconds.
const settle = 2 * time.Second

var (
	restartedMu sync.Mutex
	restarted   time.Time // the last time a test resumed or restarted a member
)

// Restart resumes or restarts member i, and notes the time for healthy.
func (e *ensemble) Restart(t *testing.T, i int) {
	t.Helper()
	e.Members.Restart(t, i)
	restartedMu.Lock()
	restarted = time.Now()
	restartedMu.Unlock()
}

// healthy waits until every member runs and serves, in a quorum, at least
// settle after a test last resumed or restarted one, and then grants a
// session through every member.
func (e *ensemble) healthy(t testing.TB, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	restartedMu.Lock()
	since := time.Since(restarted)
	restartedMu.Unlock()
	if since < settle {
		time.Sleep(settle - since)
	}
	for i := range e.addrs {
		for {
			alive := e.Alive(i)
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
	for i, addr := range e.addrs {
		if err := grants(addr, time.Until(deadline)); err != nil {
			t.Fatalf("zookeeper member %d (%s) serves but grants no session within %v: %v", i+1, addr, d, err)
		}
	}
}

// grants opens a session through the member at addr alone, within d.
func grants(addr string, d time.Duration) error {
	d = max(d, time.Second)
	c, err := lock.Open("zookeeper", "zk://"+addr+"/distlock-test?"+drivertest.Query("request_timeout", d.String(), "member_timeout", d.String()))
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return c.Ping(ctx)
}
