package benchmark

import (
	"encoding/json"
	"io"
	"runtime"
	"time"

	"github.com/distlock/lock/internal/latency"
)

// Report is what a run found: the machine, a row per driver measured, and
// the drivers skipped. Its JSON form is what [WriteJSON] writes.
type Report struct {
	Machine  Machine `json:"machine"`
	Duration string  `json:"duration"` // of each measurement, as time.Duration prints it
	Hold     string  `json:"hold"`     // how long a holder keeps the key in the handoff measurements
	Rows     []Row   `json:"drivers"`
	Skipped  []Skip  `json:"skipped,omitempty"`
	// HungNodes describes the nodes of the hung measurement, when it ran;
	// HungSkipped says why it did not, when a Redlock driver was measured.
	HungNodes   string `json:"hung_nodes,omitempty"`
	HungSkipped string `json:"hung_skipped,omitempty"`
	// Faults is the faults section, when it ran: a result per networked
	// driver measured.
	Faults []FaultResult `json:"faults,omitempty"`
	// Paused is the paused-holder scenario of each driver, measured with
	// the faults section, before it.
	Paused []Paused `json:"paused_holder,omitempty"`
	// FaultsBefore is how long the load ran before each fault, and
	// FaultsLimit the longest it went on after, as time.Duration prints
	// them.
	FaultsBefore string `json:"faults_before,omitempty"`
	FaultsLimit  string `json:"faults_limit,omitempty"`
	// Interrupted is set when the run was cancelled before its end: the
	// rows hold what was measured until then.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Machine is what the figures were measured on.
type Machine struct {
	Go         string `json:"go"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	NumCPU     int    `json:"num_cpu"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	Date       string `json:"date"` // RFC 3339, UTC, when the run started
}

// ThisMachine returns the facts of the running program's machine, dated
// now.
func ThisMachine(now time.Time) Machine {
	return Machine{
		Go:         runtime.Version(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		NumCPU:     runtime.NumCPU(),
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
		Date:       now.UTC().Format(time.RFC3339),
	}
}

// Row is one driver's figures.
type Row struct {
	Driver string `json:"driver"`
	Nodes  int    `json:"nodes"` // Redlock's N; 1 for the others
	// Uncontended is TryAcquire and Release, one after another, on one
	// goroutine.
	Uncontended Figures `json:"uncontended"`
	// Keys16 is the same on 16 goroutines sharing one client, a key each.
	Keys16 Figures `json:"keys16"`
	// Shared is 8 goroutines sharing one client taking turns at one key,
	// each holding it 1ms: PerSecond counts handoffs, Latency is the wait
	// in Acquire.
	Shared Figures `json:"handoffs_shared_client"`
	// PerClient is Shared with a client per goroutine.
	PerClient Figures `json:"handoffs_client_each"`
	// Hung is Uncontended on nodes of the run's own with 2 of 5 hung, for
	// the Redlock drivers; nil for the others.
	Hung *Figures `json:"hung_2_of_5,omitempty"`
}

// Figures are what one measurement found. A measurement that could not
// run has Skipped or Error set and no other figures.
type Figures struct {
	Ops       int64         `json:"ops"`    // operations that succeeded
	Failed    int64         `json:"failed"` // operations that failed
	Seconds   float64       `json:"seconds"`
	PerSecond float64       `json:"per_second"` // Ops per second
	Latency   *Distribution `json:"latency,omitempty"`
	// LastError is the last failure's error, when some operations failed.
	LastError string `json:"last_error,omitempty"`
	// Error says why the measurement failed: it could not start, or no
	// operation succeeded.
	Error   string `json:"error,omitempty"`
	Skipped string `json:"skipped,omitempty"` // why it did not run
}

// OK reports whether f holds figures.
func (f Figures) OK() bool { return f.Error == "" && f.Skipped == "" }

// Distribution is a latency distribution, in microseconds.
type Distribution struct {
	P50  float64 `json:"p50_us"`
	P90  float64 `json:"p90_us"`
	P99  float64 `json:"p99_us"`
	P999 float64 `json:"p99_9_us"`
	Max  float64 `json:"max_us"`
	// Curve is the distribution at the quantiles of [CurveQuantiles].
	Curve []Point `json:"curve"`
}

// Point is one quantile of a [Distribution].
type Point struct {
	Q      float64 `json:"q"`
	Micros float64 `json:"us"`
}

// CurveQuantiles are the quantiles of a [Distribution]'s curve, from the
// median to the 99.9th percentile.
var CurveQuantiles = []float64{0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.998, 0.999}

// Distribute returns the distribution of the samples of rs, or nil if
// they hold none.
func Distribute(rs ...*latency.Recorder) *Distribution {
	all := latency.Sorted(rs...)
	if len(all) == 0 {
		return nil
	}
	us := func(q float64) float64 { return micros(latency.Percentile(all, q)) }
	d := &Distribution{P50: us(0.5), P90: us(0.9), P99: us(0.99), P999: us(0.999), Max: micros(all[len(all)-1])}
	for _, q := range CurveQuantiles {
		d.Curve = append(d.Curve, Point{Q: q, Micros: us(q)})
	}
	return d
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// Skip is a driver that was not measured, and why.
type Skip struct {
	Driver string `json:"driver"`
	Reason string `json:"reason"`
}

// WriteJSON writes r to w as indented JSON.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
