package benchmark

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// column is a column of the table: the group it is in (a heading over
// adjacent columns of one group), its header, and its cell of a row.
type column struct {
	group, header string
	cell          func(Row) string
}

// columns are the table's columns after the driver's.
var columns = []column{
	{"uncontended", "p50 µs", func(r Row) string { return figure(r.Uncontended, latencyOf(p50, micro)) }},
	{"uncontended", "p99 µs", func(r Row) string { return figure(r.Uncontended, latencyOf(p99, micro)) }},
	{"16 keys", "ops/s", func(r Row) string { return figure(r.Keys16, rate) }},
	{"1 key, 1 client", "handoffs/s", func(r Row) string { return figure(r.Shared, rate) }},
	{"1 key, 1 client", "wait p50 ms", func(r Row) string { return figure(r.Shared, latencyOf(p50, milli)) }},
	{"1 key, 1 client", "p99 ms", func(r Row) string { return figure(r.Shared, latencyOf(p99, milli)) }},
	{"1 key, 8 clients", "handoffs/s", func(r Row) string { return figure(r.PerClient, rate) }},
	{"1 key, 8 clients", "wait p50 ms", func(r Row) string { return figure(r.PerClient, latencyOf(p50, milli)) }},
	{"1 key, 8 clients", "p99 ms", func(r Row) string { return figure(r.PerClient, latencyOf(p99, milli)) }},
	{"2 of 5 nodes hung", "p50 µs", func(r Row) string { return hungFigure(r, latencyOf(p50, micro)) }},
	{"2 of 5 nodes hung", "p99 µs", func(r Row) string { return hungFigure(r, latencyOf(p99, micro)) }},
}

func p50(d *Distribution) float64 { return d.P50 }
func p99(d *Distribution) float64 { return d.P99 }

const (
	micro = 1    // µs per µs
	milli = 1000 // µs per ms
)

// latencyOf returns a cell function that prints a quantile of a
// measurement's latency, in µs divided by scale.
func latencyOf(q func(*Distribution) float64, scale float64) func(Figures) string {
	return func(f Figures) string {
		if f.Latency == nil {
			return "-"
		}
		return number(q(f.Latency) / scale)
	}
}

func rate(f Figures) string { return fmt.Sprintf("%.0f", f.PerSecond) }

// figure returns f's cell: what show makes of it, or why there is none.
func figure(f Figures, show func(Figures) string) string {
	switch {
	case f.Skipped != "":
		return "skipped"
	case f.Error != "":
		return "failed"
	}
	return show(f)
}

func hungFigure(r Row, show func(Figures) string) string {
	if r.Hung == nil {
		return "-"
	}
	return figure(*r.Hung, show)
}

// number prints v with about three significant digits.
func number(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// driverLabel names a row's driver, with Redlock's node count.
func driverLabel(r Row) string {
	if IsRedlock(r.Driver) {
		return fmt.Sprintf("%s N=%d", r.Driver, r.Nodes)
	}
	return r.Driver
}

// WriteTable writes r to w as an aligned table, a row per driver, followed
// by what the columns measure, the failures, the drivers skipped, and the
// faults section when it ran.
func WriteTable(w io.Writer, r *Report) error {
	groups := []string{""}
	headers := []string{"driver"}
	for _, c := range columns {
		groups, headers = append(groups, c.group), append(headers, c.header)
	}
	var rows [][]string
	for _, row := range r.Rows {
		cells := []string{driverLabel(row)}
		for _, c := range columns {
			cells = append(cells, c.cell(row))
		}
		rows = append(rows, cells)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "distlock bench: %s per measurement; %s %s/%s, GOMAXPROCS %d, %s\n\n",
		r.Duration, r.Machine.Go, r.Machine.OS, r.Machine.Arch, r.Machine.GOMAXPROCS, r.Machine.Date)
	writeAligned(&b, groups, headers, rows)
	writeNotes(&b, r)
	writePaused(&b, r)
	writeFaults(&b, r)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeAligned writes the group headings, the headers and the rows in
// columns two spaces apart: the first left-aligned, the others
// right-aligned, and each group's heading left-aligned over its columns.
func writeAligned(b *strings.Builder, groups, headers []string, rows [][]string) {
	widths := make([]int, len(headers))
	for i, h := range headers {
		widths[i] = width(h)
		for _, row := range rows {
			widths[i] = max(widths[i], width(row[i]))
		}
	}
	var heads strings.Builder
	for start, end := range spans(groups) {
		span := 2 * (end - start)
		for i := start; i <= end; i++ {
			span += widths[i]
		}
		widths[end] += max(0, width(groups[start])-span) // a heading wider than its columns
		if start > 0 {
			heads.WriteString("  ")
		}
		heads.WriteString(groups[start] + strings.Repeat(" ", max(0, span-width(groups[start]))))
	}
	b.WriteString(strings.TrimRight(heads.String(), " ") + "\n")
	for _, cells := range append([][]string{headers}, rows...) {
		var line strings.Builder
		for i, c := range cells {
			pad := strings.Repeat(" ", widths[i]-width(c))
			switch {
			case i == 0:
				line.WriteString(c + pad)
			default:
				line.WriteString("  " + pad + c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// spans yields the first and last index of each run of equal groups.
func spans(groups []string) func(yield func(int, int) bool) {
	return func(yield func(int, int) bool) {
		for start := 0; start < len(groups); {
			end := start
			for end+1 < len(groups) && groups[end+1] == groups[start] {
				end++
			}
			if !yield(start, end) {
				return
			}
			start = end + 1
		}
	}
}

func width(s string) int { return utf8.RuneCountInString(s) }

// labelledFigures are a measurement's figures and its label.
type labelledFigures struct {
	label string
	f     Figures
}

// labelled returns r's measurements with their labels, in the table's
// order, the hung one only when r has it.
func (r Row) labelled() []labelledFigures {
	out := []labelledFigures{{"uncontended", r.Uncontended}, {"16 keys", r.Keys16},
		{"handoffs, 1 client", r.Shared}, {"handoffs, 8 clients", r.PerClient}}
	if r.Hung != nil {
		out = append(out, labelledFigures{"2 of 5 nodes hung", *r.Hung})
	}
	return out
}

// howToStart says what to check when drivers were skipped.
const howToStart = "to measure them, check that their servers answer at the DSNs given (this repository's test servers: `scripts/services.sh up`, and their DSNs from `scripts/services.sh env`, as make demo passes them)"

// writeNotes writes what the columns measure, the failures, and the
// drivers skipped.
func writeNotes(b *strings.Builder, r *Report) {
	fmt.Fprintf(b, "\nuncontended: TryAcquire+Release, one goroutine. 16 keys: %d goroutines sharing a client, a key each.\n", KeysGoroutines)
	fmt.Fprintf(b, "1 key: %d goroutines take turns at one key, holding it %s; wait: Acquire's latency.\n", HandoffGoroutines, r.Hold)
	switch {
	case r.HungNodes != "":
		fmt.Fprintf(b, "2 of 5 nodes hung: uncontended, on %s.\n", r.HungNodes)
	case r.HungSkipped != "":
		fmt.Fprintf(b, "2 of 5 nodes hung: skipped: %s.\n", r.HungSkipped)
	}
	for _, row := range r.Rows {
		for _, m := range row.labelled() {
			switch {
			case m.f.Error != "":
				fmt.Fprintf(b, "%s, %s: failed: %s\n", row.Driver, m.label, abridge(m.f.Error))
			case m.f.Failed > 0:
				fmt.Fprintf(b, "%s, %s: %d of %d operations failed (the last: %s)\n",
					row.Driver, m.label, m.f.Failed, m.f.Ops+m.f.Failed, abridge(m.f.LastError))
			}
		}
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(b, "skipped %s: %s\n", s.Driver, abridge(s.Reason))
	}
	if len(r.Skipped) > 0 {
		b.WriteString(howToStart + "\n")
	}
	if r.Interrupted {
		b.WriteString("interrupted: the figures are those measured until then\n")
	}
}

// noteLength is the longest an error is in the table's notes, in runes;
// the JSON has it whole.
const noteLength = 200

// abridge returns msg on one line, cut to noteLength runes.
func abridge(msg string) string {
	msg = strings.Join(strings.Fields(msg), " ")
	if r := []rune(msg); len(r) > noteLength {
		return string(r[:noteLength-1]) + "…"
	}
	return msg
}
