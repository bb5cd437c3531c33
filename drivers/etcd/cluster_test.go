package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// cluster is the test cluster's members as processes, for the fault
// tests: scripts/services.d/etcd.sh keeps member i's PID in
// $DISTLOCK_SERVICES_DIR/etcd-<i+1>/etcd.pid and starts it with run.sh
// there. It implements conformance.Faults.
type cluster struct {
	*drivertest.Members
	eps []string
}

// theCluster returns the test cluster, skipping the test without it.
func theCluster(t testing.TB) *cluster {
	t.Helper()
	c := &cluster{eps: endpoints(t)}
	c.Members = drivertest.NewMembers(drivertest.MembersConfig{
		Name:    "etcd member",
		Dirs:    drivertest.MemberDirs(drivertest.ServicesDir(t), "etcd-", len(c.eps)),
		Addrs:   drivertest.Hosts(t, c.eps),
		PIDFile: "etcd.pid",
		Start: func(dir string) *exec.Cmd {
			return exec.Command("setsid", "-f", "bash", filepath.Join(dir, "run.sh"))
		},
		Ready: func(t *testing.T, i int) {
			if err := c.waitAnswers(i, 20*time.Second); err != nil {
				t.Fatalf("etcd member %d restarted, but: %v", i+1, err)
			}
		},
	})
	return c
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
