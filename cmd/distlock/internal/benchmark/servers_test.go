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

// TestRunPaused_servers runs the paused-holder scenario on PostgreSQL, on
// Redlock with fencing tokens and without: the takeover comes after the
// lease and within a second more, the paused lock said it was lost, and
// the guard refused its write where there were tokens.
func TestRunPaused_servers(t *testing.T) {
	redis := redistest.DSN(testenv.RedisAddrs(t), "")
	targets := []Target{
		{Driver: "postgres", DSN: testenv.PostgresDSN(t) + "&distlock_table=distlock_bench_test_leases"},
		{Driver: "goredis", DSN: redis + "?fencing=true&key_prefix=paused-fenced:"},
		{Driver: "goredis", DSN: redis + "?key_prefix=paused-plain:"},
	}
	var ready []probed
	for _, pr := range probe(t.Context(), targets, quietProgress().Logger()) {
		if pr.err != nil {
			t.Fatalf("%s: %v", pr.Driver, pr.err)
		}
		defer pr.client.Close()
		ready = append(ready, pr)
	}
	ps := runPaused(t.Context(), ready, NewKeys(), quietProgress())
	want := []string{PausedRefused, PausedRefused, PausedNoTokens}
	for i, p := range ps {
		t.Logf("%+v", p)
		switch {
		case p.Error != "":
			t.Errorf("%s: %s", p.Driver, p.Error)
		case p.TakenOverMs < ms(PausedTTL) || p.TakenOverMs > ms(PausedTTL)+1500:
			t.Errorf("%s: taken over after %.0fms; want the %v lease and at most 1.5s more", p.Driver, p.TakenOverMs, PausedTTL)
		case !p.ToldLost || p.Guarded != want[i] || p.Unguarded != PausedOverwrote:
			t.Errorf("%s: told lost %v, guarded %q, unguarded %q; want true, %q, %q", p.Driver, p.ToldLost, p.Guarded, p.Unguarded, want[i], PausedOverwrote)
		}
	}
}
