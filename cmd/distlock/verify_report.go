package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/internal/procs"
)

// shownPairs bounds the offending pairs the table shows; --json has all
// the engine kept.
const shownPairs = 10

// printContention writes a contention run's table: what was checked, what
// broke, the offending pairs, what was dropped, and the verdict.
func printContention(w io.Writer, c contention, res contentionResult, lintFailed bool) error {
	faults := "holders paused past their TTL"
	if res.netFaults {
		faults += ", connections reset and slowed"
	}
	fmt.Fprintf(w, "contention run: %s, %d workers on %d keys for %v, TTL %v, %s\n",
		c.driver, c.workers, c.keys, c.duration, c.ttl, faults)
	fmt.Fprintf(w, "scratch namespace: %s\n\n", res.namespace)
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	row := func(name, format string, args ...any) {
		fmt.Fprintf(tw, "  %s\t%s\n", name, fmt.Sprintf(format, args...))
	}
	row("holdings", "%d (%.0f/s), %d failed attempts", res.Acquired, res.AcquiredPerSecond, res.Failed)
	row("overlaps", "%d", res.Overlaps)
	if res.fenced {
		row("token regressions", "%d", res.Regressions)
	} else {
		row("token regressions", "not checked: the driver's locks carry no fencing tokens")
	}
	row("lost writes", "%d of %d register writes (%d stale ones refused)", res.LostWrites, res.Writes, res.StaleRefused)
	row("returned expired", "%d", res.ExpiredAtReturn)
	row("longest with no holder", "%v", res.LongestUnavailable.Round(time.Millisecond))
	if res.inspected {
		row("locks left a TTL later", "%d (%d when the workers ended)", res.LeftAfterTTL, res.LeftAtEnd)
	} else {
		row("locks left a TTL later", "not counted: the driver cannot tell who holds a key")
	}
	row("faults", "%s", faultsLine(res.Faults))
	if !res.netFaults {
		row("", "no connection faults: the driver cannot dial through a dialer of verify's")
	}
	if missing := neverDealt(res); len(missing) > 0 {
		row("", "never dealt: %s (a longer --duration deals every kind)", strings.Join(missing, ", "))
	}
	tw.Flush()
	if len(res.Pairs) > 0 {
		fmt.Fprintf(w, "\noffending pairs (%d shown of %d overlaps and %d regressions; times from the run's start):\n",
			min(len(res.Pairs), shownPairs), res.Overlaps, res.Regressions)
		for _, p := range res.Pairs[:min(len(res.Pairs), shownPairs)] {
			fmt.Fprintf(w, "  %s\n", pairLine(p, res.Start))
		}
	}
	fmt.Fprintln(w)
	if res.dropped {
		fmt.Fprintf(w, "scratch %s dropped\n", res.namespace)
	} else {
		fmt.Fprintf(w, "scratch %s\n", res.left)
	}
	if res.dropErr != nil {
		fmt.Fprintf(w, "drop: %s\n", oneLine(res.dropErr.Error()))
	}
	for _, what := range res.swept {
		fmt.Fprintf(w, "scratch %s of an earlier run, no longer in use, dropped\n", what)
	}
	if res.sweepErr != nil {
		fmt.Fprintf(w, "sweeping earlier runs' namespaces: %s\n", oneLine(res.sweepErr.Error()))
	}
	_, err := fmt.Fprintln(w, verdict(res, lintFailed))
	return err
}

// verdict is the table's last line. A settings finding that is an error
// fails the run too.
func verdict(res contentionResult, lintFailed bool) string {
	if !res.Broken() && lintFailed {
		return "FAIL: no promise broken in this run, but a setting can break one (the errors above)"
	}
	if !res.Broken() {
		return "PASS: no promise broken"
	}
	var broke []string
	for _, b := range []struct {
		n    int
		what string
	}{
		{res.Overlaps, "overlap"}, {res.Regressions, "token regression"}, {res.LostWrites, "lost write"},
		{res.ExpiredAtReturn, "lock returned expired"}, {res.LeftAfterTTL, "lock left a TTL later"},
	} {
		if b.n > 0 {
			broke = append(broke, plural(b.n, b.what))
		}
	}
	if lintFailed {
		broke = append(broke, "and a setting can break a promise (the errors above)")
	}
	return "FAIL: " + strings.Join(broke, ", ")
}

// faultsLine is the nemesis's actions, by kind.
func faultsLine(faults map[string]int) string {
	var kinds []string
	for _, k := range slices.Sorted(maps.Keys(faults)) {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, faults[k]))
	}
	return cmp.Or(strings.Join(kinds, ", "), "none")
}

// neverDealt returns the kinds of fault the run could deal and did not: a
// run too short, or whose workers were slow to start, tested less than its
// table may suggest.
func neverDealt(res contentionResult) []string {
	kinds := []string{procs.PauseHolder}
	if res.netFaults {
		kinds = append(kinds, procs.ResetConnections, procs.SlowConnections)
	}
	var missing []string
	for _, k := range kinds {
		if res.Faults[k] == 0 {
			missing = append(missing, k)
		}
	}
	return missing
}

// pairLine is an offending pair in a sentence.
func pairLine(p procs.Pair, start time.Time) string {
	at := func(t time.Time) time.Duration {
		return time.Duration(t.UnixNano() - procs.Mono(start)).Round(time.Millisecond)
	}
	tok := func(h procs.Hold) string {
		if !h.Fenced {
			return ""
		}
		return fmt.Sprintf(" (token %d)", h.Token)
	}
	first, second := p.First, p.Second
	if p.Kind == procs.KindRegression {
		return fmt.Sprintf("%s: token regression: worker %d took it at %v with token %d, after worker %d's token %d (at %v)",
			first.Key, second.Worker, at(second.From), second.Token, first.Worker, first.Token, at(first.From))
	}
	return fmt.Sprintf("%s: overlap: worker %d%s held it %v-%v; worker %d%s took it at %v, %v before that ended",
		first.Key, first.Worker, tok(first), at(first.From), at(first.To), second.Worker, tok(second), at(second.From),
		first.To.Sub(second.From).Round(time.Millisecond))
}

// contentionJSON is 'distlock verify --json' without --lint-only.
type contentionJSON struct {
	OK       bool          `json:"ok"` // no promise broken, no error found
	Findings []findingJSON `json:"findings"`
	Run      runJSON       `json:"run"`
}

// runJSON is a contention run in JSON. Times are seconds.
type runJSON struct {
	Driver              string         `json:"driver"`
	Namespace           string         `json:"namespace"`
	Dropped             bool           `json:"dropped"`
	Left                string         `json:"left,omitempty"`
	Swept               []string       `json:"swept"`                 // earlier runs' namespaces, no longer in use, dropped
	SweepError          string         `json:"sweep_error,omitempty"` // the sweep failed
	Workers             int            `json:"workers"`
	Keys                int            `json:"keys"`
	DurationS           float64        `json:"duration_s"`
	TTLS                float64        `json:"ttl_s"`
	Fenced              bool           `json:"fenced"`
	NetFaults           bool           `json:"net_faults"` // the workers' connections took faults (reset, slowed)
	Holdings            int            `json:"holdings"`
	FailedAttempts      int            `json:"failed_attempts"`
	Overlaps            int            `json:"overlaps"`
	TokenRegressions    int            `json:"token_regressions"`
	Writes              int            `json:"writes"`
	LostWrites          int            `json:"lost_writes"`
	StaleRefused        int            `json:"stale_refused"`
	ReturnedExpired     int            `json:"returned_expired"`
	LongestNoHolderS    float64        `json:"longest_without_holder_s"`
	LeftoversCounted    bool           `json:"leftovers_counted"`
	LeftAtEnd           int            `json:"left_at_end"`
	LeftAfterTTL        int            `json:"left_after_ttl"`
	Faults              map[string]int `json:"faults"`
	Pairs               []pairJSON     `json:"pairs"`
	WorkerErrors        []string       `json:"worker_errors,omitempty"`
	FailedAttemptErrors []string       `json:"failed_attempt_errors,omitempty"`
}

// pairJSON is an offending pair of holdings.
type pairJSON struct {
	Kind   string   `json:"kind"` // overlap or regression
	Key    string   `json:"key"`
	First  holdJSON `json:"first"`
	Second holdJSON `json:"second"`
}

// holdJSON is a holding, its times in seconds from the run's start.
type holdJSON struct {
	Worker int     `json:"worker"`
	Token  *uint64 `json:"token,omitempty"`
	FromS  float64 `json:"from_s"`
	ToS    float64 `json:"to_s"`
}

// printContentionJSON writes the findings and the run as one JSON object.
func printContentionJSON(w io.Writer, c contention, res contentionResult, fs []driver.Finding) error {
	out := contentionJSON{Findings: findingsJSON(fs), Run: runJSON{
		Driver: c.driver, Namespace: res.namespace, Dropped: res.dropped, Left: res.left, Swept: append([]string{}, res.swept...),
		Workers: c.workers, Keys: c.keys, DurationS: c.duration.Seconds(), TTLS: c.ttl.Seconds(), Fenced: res.fenced, NetFaults: res.netFaults,
		Holdings: res.Acquired, FailedAttempts: res.Failed, Overlaps: res.Overlaps, TokenRegressions: res.Regressions,
		Writes: res.Writes, LostWrites: res.LostWrites, StaleRefused: res.StaleRefused, ReturnedExpired: res.ExpiredAtReturn,
		LongestNoHolderS: res.LongestUnavailable.Seconds(), LeftoversCounted: res.inspected,
		LeftAtEnd: res.LeftAtEnd, LeftAfterTTL: res.LeftAfterTTL, Faults: res.Faults, Pairs: []pairJSON{},
		WorkerErrors: res.WorkerErrors, FailedAttemptErrors: res.FailedErrors,
	}}
	if res.sweepErr != nil {
		out.Run.SweepError = oneLine(res.sweepErr.Error())
	}
	base := procs.Mono(res.Start)
	hold := func(h procs.Hold) holdJSON {
		j := holdJSON{Worker: h.Worker, FromS: float64(h.From.UnixNano()-base) / 1e9, ToS: float64(h.To.UnixNano()-base) / 1e9}
		if h.Fenced {
			t := uint64(h.Token)
			j.Token = &t
		}
		return j
	}
	for _, p := range res.Pairs {
		out.Run.Pairs = append(out.Run.Pairs, pairJSON{Kind: p.Kind, Key: p.First.Key, First: hold(p.First), Second: hold(p.Second)})
	}
	out.OK = !res.Broken() && !slices.ContainsFunc(out.Findings, func(f findingJSON) bool { return f.Severity == "error" })
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
