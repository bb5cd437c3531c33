package benchmark

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
)

// TestRunFault_outage runs the load through a backend down for 500ms,
// and checks what the result says of it. Recovery is found to the
// 100ms: a window that starts up to a bucket before the backend is back
// can hold 80% of the rate.
//
// The rate after the outage is judged against the rate before it, and a
// machine that other tests load more after the outage than before never
// gives back 80% of it (make test: 2,410/s before, 1,000-1,900/s for the
// 4s after, recovery never found). So a measurement whose only fault is
// that is made again, up to three times in all; any other fault fails at
// once.
func TestRunFault_outage(t *testing.T) {
	c, err := lock.Open(outageDriverName, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fp := FaultPlan{Before: time.Second, Limit: 5 * time.Second}
	for attempt := 1; ; attempt++ {
		fr := runFault(t.Context(), c, NewKeys(), fp, outage{500 * time.Millisecond}, FaultResult{Driver: outageDriverName, BucketMS: 100, Restored: true})
		checkOutage(t, fr)
		if t.Failed() {
			return
		}
		if fr.RecoveryMS != nil && *fr.RecoveryMS >= 350 && *fr.RecoveryMS <= 1500 {
			return
		}
		if attempt == 3 {
			t.Fatalf("recovery %v in %d attempts, want about 500ms; before %.0f/s, timeline %v", ptr(fr.RecoveryMS), attempt, fr.BeforePerSecond, fr.Successes)
		}
		t.Logf("attempt %d: recovery %v, want about 500ms; before %.0f/s, timeline %v: measuring again", attempt, ptr(fr.RecoveryMS), fr.BeforePerSecond, fr.Successes)
	}
}

// checkOutage checks the result of TestRunFault_outage's measurement,
// but for its recovery.
func checkOutage(t *testing.T, fr FaultResult) {
	t.Helper()
	if !fr.HasFault() || fr.Summary != "down" {
		t.Fatalf("result %+v", fr)
	}
	if fr.Failed == 0 || fr.FailedBy["unavailable"] != fr.Failed || fr.LastErrorBy["unavailable"] == "" {
		t.Errorf("failures %d, by class %v, last %v: want every one unavailable", fr.Failed, fr.FailedBy, fr.LastErrorBy)
	}
	if fr.LongestGapMS < 450 || fr.LongestGapMS > 1500 {
		t.Errorf("longest gap %.0fms, want about 500ms", fr.LongestGapMS)
	}
	if fr.BackMS == nil || *fr.BackMS < 450 {
		t.Errorf("server back after %v, want about 500ms", fr.BackMS)
	}
	if fr.BeforePerSecond <= 0 || fr.FaultAtMS < 1000 || fr.FaultAtMS > 1200 {
		t.Errorf("before %.0f/s, fault at %.0fms", fr.BeforePerSecond, fr.FaultAtMS)
	}
	// The timeline: whole buckets, the outage's empty, and every
	// operation counted once.
	if len(fr.Successes) != len(fr.Failures) || len(fr.Successes) < 20 {
		t.Fatalf("timeline of %d and %d buckets", len(fr.Successes), len(fr.Failures))
	}
	var ops int64
	for _, n := range fr.Successes {
		ops += n
	}
	if ops > fr.Ops || ops < fr.Ops/2 {
		t.Errorf("timeline holds %d successes of %d", ops, fr.Ops)
	}
	if i := int(fr.FaultAtMS)/fr.BucketMS + 2; fr.Successes[i] != 0 {
		t.Errorf("bucket %d, during the outage: %d successes", i, fr.Successes[i])
	}
}

// TestRun_faultEntryForEveryNetworkedDriver checks that with the faults
// section on, every networked driver measured has a fault entry, with a
// note when --servers-dir does not name its servers, and memory none.
func TestRun_faultEntryForEveryNetworkedDriver(t *testing.T) {
	plan := Plan{
		Targets: []Target{
			{Driver: "memory", DSN: "benchmark-test-faults"},
			{Driver: outageDriverName, DSN: "x"},
		},
		Duration: 20 * time.Millisecond, Hold: time.Millisecond, HungSkip: "not wanted",
		Faults: &FaultPlan{ServersDir: t.TempDir()},
	}
	r := Run(t.Context(), plan, quietProgress())
	if len(r.Rows) != 2 {
		t.Fatalf("rows %+v", r.Rows)
	}
	var drivers []string
	for _, fr := range r.Faults {
		drivers = append(drivers, fr.Driver)
	}
	if len(r.Faults) != 1 || r.Faults[0].Driver != outageDriverName || r.Faults[0].Note != "no fault: not in --servers-dir" || r.Faults[0].Error != "" {
		t.Fatalf("faults of %v: %+v, want one, for %s, noted", drivers, r.Faults, outageDriverName)
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Faults []FaultResult `json:"faults"`
	}
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Faults) != 1 {
		t.Errorf("JSON's faults %+v, %v", back.Faults, err)
	}
}

func TestReadServerFile_linesAndAddresses(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, FaultsFolder), 0o755); err != nil {
		t.Fatal(err)
	}
	file := "# a comment\n\ndurability\tno fsync\n" +
		"server\ta\t127.0.0.1:7001\t/s/a/pid\t/s/a\t/s/a/start\t-\n" +
		"server\tb\t127.0.0.1:7002\t/s/b/pid\t/s/b\t/s/b/start\thttp://127.0.0.1:9\n"
	if err := os.WriteFile(filepath.Join(dir, FaultsFolder, "goredis"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	sf, err := ReadServerFile(dir, "goredis")
	if err != nil {
		t.Fatal(err)
	}
	want := Server{"a", "127.0.0.1:7001", "/s/a/pid", "/s/a", "/s/a/start", ""}
	if sf.Durability != "no fsync" || len(sf.Servers) != 2 || sf.Servers[0] != want || sf.Servers[1].Status != "http://127.0.0.1:9" {
		t.Errorf("read %+v", sf)
	}
	if got := sf.Reached("redis://127.0.0.1:70012,redis://127.0.0.1:7002"); len(got) != 1 || got[0].Name != "b" {
		t.Errorf("Reached = %+v, want b alone", got)
	}
	if _, err := ReadServerFile(dir, "postgres"); err != errNotInServersDir {
		t.Errorf("a driver without a file: %v", err)
	}
	os.WriteFile(filepath.Join(dir, FaultsFolder, "bad"), []byte("server\ta\tb\n"), 0o644)
	if _, err := ReadServerFile(dir, "bad"); err == nil || !strings.Contains(err.Error(), "bad:1") {
		t.Errorf("a bad line: %v", err)
	}
	os.WriteFile(filepath.Join(dir, FaultsFolder, "rel"), []byte("server\ta\th:1\tpid\t/s\t/s/start\t-\n"), 0o644)
	if _, err := ReadServerFile(dir, "rel"); err == nil {
		t.Error("a relative pidfile was accepted")
	}
}

// TestWriteTableAndSVG_faults checks that the table and the chart show a
// fault's figures, and the servers' durability.
func TestWriteTableAndSVG_faults(t *testing.T) {
	rec, back := 300.0, 250.0
	r := &Report{
		Duration: "1s", Hold: "1ms", FaultsBefore: "3s", FaultsLimit: "15s",
		Rows: []Row{{Driver: "postgres", Nodes: 1}},
		Faults: []FaultResult{
			{Driver: "postgres", Fault: "postgres killed (SIGKILL), started again at once", Summary: "restarted postgres",
				Durability: "fsync off", Ops: 100, Failed: 7, FailedBy: map[string]int64{"unavailable": 5, "held": 2},
				LastErrorBy: map[string]string{"unavailable": "refused"}, BeforePerSecond: 50, LongestGapMS: 1234,
				RecoveryMS: &rec, BackMS: &back, FaultAtMS: 3000, BucketMS: 100, Successes: make([]int64, 40), Failures: make([]int64, 40), Restored: true},
			{Driver: "etcd", Note: "no fault: not in --servers-dir", Restored: true},
		},
	}
	var b strings.Builder
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"restarted postgres", "unavailable 5, held 2", "1.2s", "300ms", "answered again 250ms after",
		"2 operations failed as held by another holder", "the last unavailable failure: refused", "no fault: not in --servers-dir",
		"postgres: fsync off", "read no durability into these speeds"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	var svg strings.Builder
	if err := WriteSVG(&svg, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(svg.String(), "acquisitions/s through one fault") || !strings.Contains(svg.String(), "back to rate after 300ms") {
		t.Errorf("the chart lacks the faults panel")
	}
}

func ptr(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

// Drivers whose DSNs name a server in common take turns; the others run
// at once, a group each.
func TestFaultGroups(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, FaultsFolder), 0o755)
	line := func(addr string) string {
		return "server\tx\t" + addr + "\t/p/x.pid\t/p\t/p/start\t-\n"
	}
	redis := line("127.0.0.1:7001") + line("127.0.0.1:7002")
	for name, body := range map[string]string{
		"goredis": redis, "redigo": redis, "valkey": redis,
		"postgres": line("127.0.0.1:15432"), "etcd": line("127.0.0.1:23791") + line("127.0.0.1:23792"),
	} {
		if err := os.WriteFile(filepath.Join(dir, FaultsFolder, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	prs := []probed{
		{Target: Target{Driver: "goredis", DSN: "redis://127.0.0.1:7001,redis://127.0.0.1:7002"}},
		{Target: Target{Driver: "postgres", DSN: "postgres://u@127.0.0.1:15432/db"}},
		{Target: Target{Driver: "redigo", DSN: "redis://127.0.0.1:7002"}},
		{Target: Target{Driver: "etcd", DSN: "etcd://127.0.0.1:23791,127.0.0.1:23792"}},
		{Target: Target{Driver: "valkey", DSN: "redis://127.0.0.1:7009"}}, // none of the servers: alone
		{Target: Target{Driver: "nats", DSN: "nats://127.0.0.1:14221"}},   // no file: alone
	}
	got := fmt.Sprint(faultGroups(prs, dir))
	if want := "[[0 2] [1] [3] [4] [5]]"; got != want {
		t.Errorf("groups %s, want %s", got, want)
	}
}
