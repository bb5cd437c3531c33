package nats_test

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
)

// cluster is the test cluster's nodes as processes, for the fault tests:
// scripts/services.d/nats.sh keeps node i's PID in
// $DISTLOCK_SERVICES_DIR/nats/node<i+1>/nats.pid and starts it with the
// script start there. It implements conformance.Faults.
type cluster struct {
	*drivertest.Members
	monitors []string
}

// theCluster returns the test cluster, skipping the test without it.
func theCluster(t testing.TB) *cluster {
	t.Helper()
	c := &cluster{monitors: drivertest.List(t, "DISTLOCK_NATS_MONITORS")}
	hosts := strings.Split(server(t)[strings.LastIndexByte(server(t), 0x40)+1:], ",")
	c.Members = drivertest.NewMembers(drivertest.MembersConfig{
		Name:    "nats node",
		Dirs:    drivertest.MemberDirs(filepath.Join(drivertest.ServicesDir(t), "nats"), "node", len(c.monitors)),
		Addrs:   hosts,
		PIDFile: "nats.pid",
		Start:   func(dir string) *exec.Cmd { return exec.Command(filepath.Join(dir, "start")) },
		Ready: func(t *testing.T, i int) {
			if err := c.waitHealthy(i, 60*time.Second); err != nil {
				t.Fatalf("nats node %d restarted, but: %v", i+1, err)
			}
		},
	})
	return c
}

// waitHealthy waits until node i reports itself healthy: JetStream up, a
// meta leader known, its streams current.
func (c *cluster) waitHealthy(i int, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var last error
	for {
		rctx, rcancel := context.WithTimeout(ctx, time.Second)
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, c.monitors[i]+"/healthz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				rcancel()
				return nil
			}
			err = fmt.Errorf("healthz: %s", resp.Status)
		}
		rcancel()
		last = err
		if ctx.Err() != nil {
			return fmt.Errorf("not healthy within %v: %w", d, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// healthy waits until every node is healthy.
func (c *cluster) healthy(t testing.TB) {
	t.Helper()
	for i := range c.monitors {
		if err := c.waitHealthy(i, 60*time.Second); err != nil {
			t.Fatalf("nats node %d: %v", i+1, err)
		}
	}
}
