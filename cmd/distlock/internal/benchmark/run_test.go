package benchmark

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	_ "github.com/distlock/lock/drivers/postgres"
)

// quietProgress is a Progress that prints nothing.
func quietProgress() *Progress { return NewProgress(io.Discard, false) }

func TestRun_skipsUnreachableAndReportsFailures(t *testing.T) {
	plan := Plan{
		Targets: []Target{
			{Driver: "memory", DSN: "benchmark-test-run"},
			{Driver: "postgres", DSN: "postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=1"},
			{Driver: brokenDriverName},
		},
		Duration: 50 * time.Millisecond, Hold: time.Millisecond, HungSkip: "not wanted",
	}
	start := time.Now()
	r := Run(t.Context(), plan, quietProgress())
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Run took %v", took)
	}
	if len(r.Skipped) != 1 || r.Skipped[0].Driver != "postgres" || !strings.Contains(r.Skipped[0].Reason, "refused") {
		t.Errorf("skipped %+v, want postgres", r.Skipped)
	}
	if len(r.Rows) != 2 || r.Rows[0].Driver != "memory" || r.Rows[1].Driver != brokenDriverName {
		t.Fatalf("rows %+v", r.Rows)
	}
	mem, broken := r.Rows[0], r.Rows[1]
	for _, m := range mem.labelled() {
		if !m.f.OK() || m.f.Ops == 0 {
			t.Errorf("memory, %s: %+v", m.label, m.f)
		}
	}
	if mem.Hung != nil || r.HungSkipped != "" || r.HungNodes != "" {
		t.Errorf("hung measurement reported without a Redlock driver: %+v, %q, %q", mem.Hung, r.HungSkipped, r.HungNodes)
	}
	// The broken backend works for the first measurement only: the others
	// fail, each in its row, and the run goes on.
	if !broken.Uncontended.OK() {
		t.Errorf("broken, uncontended: %+v", broken.Uncontended)
	}
	for _, f := range []Figures{broken.Keys16, broken.Shared, broken.PerClient} {
		if f.OK() || !strings.Contains(f.Error, errBackendDown.Error()) {
			t.Errorf("broken backend's figures %+v, want its error", f)
		}
	}
	if r.Interrupted || r.Duration != "50ms" || r.Hold != "1ms" || r.Machine.Go == "" {
		t.Errorf("report %+v", r)
	}
}

func TestRun_interruptedStopsAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	time.AfterFunc(300*time.Millisecond, cancel) // during the first measurement
	plan := Plan{Targets: []Target{{Driver: "memory", DSN: "benchmark-test-interrupted"}}, Duration: 5 * time.Second, Hold: time.Millisecond}
	start := time.Now()
	r := Run(ctx, plan, quietProgress())
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("interrupted Run took %v", took)
	}
	if !r.Interrupted || len(r.Rows) != 1 {
		t.Fatalf("report %+v", r)
	}
	row := r.Rows[0]
	if !row.Uncontended.OK() || row.Uncontended.Ops == 0 {
		t.Errorf("the measurement interrupted: %+v, want what it measured", row.Uncontended)
	}
	for _, f := range []Figures{row.Keys16, row.Shared, row.PerClient} {
		if f.Skipped != "interrupted" {
			t.Errorf("a measurement after the interruption: %+v", f)
		}
	}
}

func TestAddrList_rangeOrEveryPort(t *testing.T) {
	for want, addrs := range map[string][]string{
		"127.0.0.1:7101-7105":       {"127.0.0.1:7101", "127.0.0.1:7102", "127.0.0.1:7103", "127.0.0.1:7104", "127.0.0.1:7105"},
		"127.0.0.1:40211,38977,402": {"127.0.0.1:40211", "127.0.0.1:38977", "127.0.0.1:402"},
		"127.0.0.1:7101":            {"127.0.0.1:7101"},
		"no address":                nil,
	} {
		if got := addrList(addrs); got != want {
			t.Errorf("addrList(%q) = %q, want %q", addrs, got, want)
		}
	}
}
