package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/internal/testenv"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// cluster is the test cluster's members as processes, for the fault
// tests: scripts/services.d/etcd.sh keeps member i's PID in
// $DISTLOCK_SERVICES_DIR/etcd-<i+1>/etcd.pid and starts it with run.sh
// there. Only a PID recorded there whose process runs in that dir is ever
// signalled. It implements conformance.Faults.
type cluster struct {
	dir string
	eps []string

	mu   sync.Mutex
	hung map[int]bool
}

var _ conformance.Faults = (*cluster)(nil)

// theCluster returns the test cluster, skipping the test without it.
func theCluster(t testing.TB) *cluster {
	t.Helper()
	eps := endpoints(t)
	dir := testenv.Lookup(t, "DISTLOCK_SERVICES_DIR")
	return &cluster{dir: dir, eps: eps, hung: make(map[int]bool)}
}

func (c *cluster) Nodes() int { return len(c.eps) }

func (c *cluster) memberDir(i int) string { return filepath.Join(c.dir, "etcd-"+strconv.Itoa(i+1)) }

// pid returns member i's PID if its process is alive (not a zombie) and
// ours: recorded in its pidfile, with the member's dir as its cwd.
func (c *cluster) pid(i int) (int, bool) {
	return testenv.ServerPID(c.memberDir(i), "etcd.pid")
}

func (c *cluster) signal(t *testing.T, i int, sig syscall.Signal) int {
	t.Helper()
	pid, ok := c.pid(i)
	if !ok {
		t.Fatalf("etcd member %d is not running", i+1)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("signal %v to etcd member %d (pid %d): %v", sig, i+1, pid, err)
	}
	return pid
}

// Kill kills member i with SIGKILL and waits until it is gone.
func (c *cluster) Kill(t *testing.T, i int) {
	t.Helper()
	c.signal(t, i, syscall.SIGKILL)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok := c.pid(i); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd member %d outlived SIGKILL by 10s", i+1)
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.mu.Lock()
	delete(c.hung, i)
	c.mu.Unlock()
}

// Hang stops member i with SIGSTOP.
func (c *cluster) Hang(t *testing.T, i int) {
	t.Helper()
	c.signal(t, i, syscall.SIGSTOP)
	c.mu.Lock()
	c.hung[i] = true
	c.mu.Unlock()
}

// Restart resumes member i if it is hung, or starts it again with its data
// if it is dead, and waits until it answers.
func (c *cluster) Restart(t *testing.T, i int) {
	t.Helper()
	c.mu.Lock()
	hung := c.hung[i]
	delete(c.hung, i)
	c.mu.Unlock()
	if _, ok := c.pid(i); ok {
		if hung {
			c.signal(t, i, syscall.SIGCONT)
		}
		return
	}
	out, err := exec.Command("setsid", "-f", "bash", filepath.Join(c.memberDir(i), "run.sh")).CombinedOutput()
	if err != nil {
		t.Fatalf("restarting etcd member %d: %v\n%s", i+1, err, out)
	}
	if err := c.waitAnswers(i, 20*time.Second); err != nil {
		t.Fatalf("etcd member %d restarted, but: %v", i+1, err)
	}
}

// waitAnswers waits until member i answers a status request.
func (c *cluster) waitAnswers(i int, d time.Duration) error {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{c.eps[i]}, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for {
		rctx, rcancel := context.WithTimeout(ctx, time.Second)
		_, err := cli.Status(rctx, c.eps[i])
		rcancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("no answer within %v: %w", d, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// healthy waits until every member is up and the cluster has a leader
// that answers linearizable reads through each of them.
func (c *cluster) healthy(t testing.TB, d time.Duration) {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.eps, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	deadline := time.Now().Add(d)
	for _, ep := range c.eps {
		for {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			st, err := cli.Status(ctx, ep)
			cancel()
			if err == nil && st.Leader != 0 {
				break
			}
			if err == nil {
				err = errors.New("no leader")
			}
			if time.Now().After(deadline) {
				t.Fatalf("etcd member %s not healthy within %v: %v", ep, d, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}
