//go:build unix

package benchmark

import (
	"testing"
	"time"

	"github.com/distlock/lock/internal/redistest"
	"github.com/distlock/lock/internal/testenv"
)

// TestRun_postgresAndGoredis measures on the test servers, and with 2 of 5
// nodes of its own hung, then checks that every figure is there and no
// node is left running.
func TestRun_postgresAndGoredis(t *testing.T) {
	server := redisServer(t)
	plan := Plan{
		Targets: []Target{
			{Driver: "goredis", DSN: redistest.DSN(testenv.RedisAddrs(t), "")},
			{Driver: "postgres", DSN: testenv.PostgresDSN(t) + "&distlock_table=distlock_bench_test_leases"},
		},
		// 1s, not less: PostgreSQL's pool opens up to 16 connections at
		// the first 16-key measurement, which under -race beside other
		// packages took longer than a 200ms window (0 operations).
		Duration: time.Second, Hold: time.Millisecond, RedisServer: server, HungBasePort: freeBase(t),
	}
	r := Run(t.Context(), plan, quietProgress())
	if len(r.Skipped) != 0 || len(r.Rows) != 2 || r.Interrupted {
		t.Fatalf("report %+v", r)
	}
	for _, row := range r.Rows {
		for _, m := range row.labelled() {
			if !m.f.OK() || m.f.Ops == 0 || m.f.Latency == nil {
				t.Errorf("%s, %s: %+v", row.Driver, m.label, m.f)
			}
		}
	}
	if r.Rows[0].Nodes != 5 || r.Rows[0].Hung == nil || r.Rows[1].Hung != nil || r.HungNodes == "" {
		t.Errorf("hung measurement: rows %+v, nodes %q", r.Rows, r.HungNodes)
	}
	if got := nodesOn(t, plan.HungBasePort); len(got) != 0 {
		t.Errorf("redis-server processes left: %v", got)
	}
}
