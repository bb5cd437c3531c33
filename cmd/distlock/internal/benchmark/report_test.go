package benchmark

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/distlock/lock/internal/latency"
)

// sampleReport is a report with every kind of row: figures, a failure, a
// Redlock row with the hung measurement and one without it, and skipped
// drivers.
func sampleReport() *Report {
	dist := func(p50 float64) *Distribution {
		d := &Distribution{P50: p50, P90: 2 * p50, P99: 4 * p50, P999: 8 * p50, Max: 9 * p50}
		for i, q := range CurveQuantiles {
			d.Curve = append(d.Curve, Point{Q: q, Micros: p50 * float64(1+i)})
		}
		return d
	}
	ok := func(rate, p50 float64) Figures {
		return Figures{Ops: int64(rate * 2), Seconds: 2, PerSecond: rate, Latency: dist(p50)}
	}
	return &Report{
		Machine:  Machine{Go: "go1.26.8", GOMAXPROCS: 2, NumCPU: 2, OS: "linux", Arch: "amd64", Date: "2026-12-03T12:00:00Z"},
		Duration: "2s", Hold: "1ms",
		Rows: []Row{
			{Driver: "memory", Nodes: 1, Uncontended: ok(500000, 1.19), Keys16: ok(900000, 2), Shared: ok(870, 6750), PerClient: ok(830, 5800)},
			{Driver: "goredis", Nodes: 5, Uncontended: ok(2500, 366), Keys16: ok(3900, 500), Shared: ok(659, 9010), PerClient: ok(168, 29700),
				Hung: &Figures{Ops: 4000, Seconds: 2, PerSecond: 2000, Latency: dist(437)}},
			{Driver: "redigo", Nodes: 5, Uncontended: ok(2400, 400), Keys16: ok(2300, 600), Shared: ok(556, 13100), PerClient: ok(183, 24300),
				Hung: &Figures{Skipped: "port 127.0.0.1:7101 is in use"}},
			{Driver: "postgres", Nodes: 1, Uncontended: Figures{Ops: 10, Failed: 3, Seconds: 2, PerSecond: 5, Latency: dist(211), LastError: "conn reset"},
				Keys16: Figures{Failed: 7, Seconds: 2, LastError: "server down", Error: "no operation succeeded: server down"},
				Shared: Figures{Skipped: "interrupted"}, PerClient: Figures{Skipped: "interrupted"}},
		},
		Skipped:   []Skip{{Driver: "mongodb", Reason: "no answer within 3s: server selection timeout"}},
		HungNodes: "5 redis-server processes of bench's own on 127.0.0.1:7101-7105, 2 of them hung with SIGSTOP",
	}
}

func TestWriteJSON_roundTripsEveryFigure(t *testing.T) {
	r := sampleReport()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if !reflect.DeepEqual(&back, r) {
		t.Errorf("JSON does not round-trip:\n%s", buf.String())
	}
	var raw map[string]any
	json.Unmarshal(buf.Bytes(), &raw)
	machine, _ := raw["machine"].(map[string]any)
	for _, k := range []string{"go", "gomaxprocs", "num_cpu", "os", "arch", "date"} {
		if _, ok := machine[k]; !ok {
			t.Errorf("machine lacks %q: %v", k, machine)
		}
	}
	row := raw["drivers"].([]any)[1].(map[string]any)
	for _, k := range []string{"uncontended", "keys16", "handoffs_shared_client", "handoffs_client_each", "hung_2_of_5"} {
		f, ok := row[k].(map[string]any)
		if !ok || f["per_second"] == nil || f["latency"].(map[string]any)["p99_us"] == nil {
			t.Errorf("goredis row's %q lacks its figures: %v", k, row[k])
		}
	}
}

func TestThisMachine_namesGoAndDate(t *testing.T) {
	m := ThisMachine(time.Date(2026, 12, 3, 13, 0, 0, 0, time.FixedZone("CET", 3600)))
	if m.Go == "" || m.GOMAXPROCS < 1 || m.OS == "" || m.Arch == "" || m.Date != "2026-12-03T12:00:00Z" {
		t.Errorf("ThisMachine = %+v", m)
	}
}

func TestDistribute_quantilesInMicroseconds(t *testing.T) {
	if Distribute(latency.New(0)) != nil {
		t.Error("Distribute of no samples is not nil")
	}
	r := latency.New(1000)
	for i := 1; i <= 1000; i++ {
		r.Add(time.Duration(i) * time.Microsecond)
	}
	d := Distribute(r)
	if d.P50 != 501 || d.P90 != 901 || d.P99 != 991 || d.P999 != 1000 || d.Max != 1000 {
		t.Errorf("Distribute = %+v", d)
	}
	if len(d.Curve) != len(CurveQuantiles) || d.Curve[0] != (Point{Q: 0.5, Micros: 501}) {
		t.Errorf("curve = %v", d.Curve)
	}
}
