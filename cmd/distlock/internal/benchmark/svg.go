package benchmark

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
)

// The chart's geometry, in pixels.
const (
	svgWidth     = 960
	curveTop     = 80  // top of the percentile panels
	curveHeight  = 250 // their plot's height
	legendTop    = 375 // the drivers' legend
	barsTop      = 430 // the handoffs panel's title
	barRowHeight = 40  // per driver in the bar panels
)

// palette gives each driver its colour in every panel.
var palette = map[string]string{
	"memory": "#7f7f7f", "goredis": "#d62728", "redigo": "#ff7f0e", "postgres": "#1f77b4", "mongodb": "#2ca02c", "etcd": "#9467bd", "zookeeper": "#8c564b",
	"rueidis": "#e377c2", "valkey": "#bcbd22", "mysql": "#17becf", "nats": "#393b79",
}

func colour(driverName string) string {
	if c, ok := palette[driverName]; ok {
		return c
	}
	return "#9467bd"
}

// series is a percentile curve of the chart.
type series struct {
	label, colour string
	dashed        bool
	points        []Point
}

// WriteSVG writes r to w as a self-contained SVG chart: the percentile
// curves (p50 to p99.9, log scale) of the uncontended acquire+release
// latency (and of Redlock's with 2 of 5 nodes hung, dashed) and of the wait
// for one key (with a client per goroutine, dashed), then the handoff
// rates as bars, and, when the faults section ran, the acquisitions per
// second through each fault.
func WriteSVG(w io.Writer, r *Report) error {
	height := barsTop + 28 + barRowHeight*max(1, len(r.Rows)) + 20
	faultsTop := height + 20
	if hasFaults(r) {
		height = faultsTop + faultsHeight(len(measuredFaults(r))) + 10
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		svgWidth, height, svgWidth, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#ffffff"/>`+"\n")
	text(&b, 20, 28, "start", 16, "distlock bench")
	text(&b, 20, 48, "start", 12, fmt.Sprintf("%s per measurement; %s %s/%s, GOMAXPROCS %d, %s",
		r.Duration, r.Machine.Go, r.Machine.OS, r.Machine.Arch, r.Machine.GOMAXPROCS, r.Machine.Date))
	var uncontended, waits []series
	for _, row := range r.Rows {
		label, c := driverLabel(row), colour(row.Driver)
		if f := row.Uncontended; f.OK() && f.Latency != nil {
			uncontended = append(uncontended, series{label, c, false, f.Latency.Curve})
		}
		if f := row.Hung; f != nil && f.OK() && f.Latency != nil {
			uncontended = append(uncontended, series{label + ", 2 of 5 hung", c, true, f.Latency.Curve})
		}
		if f := row.Shared; f.OK() && f.Latency != nil {
			waits = append(waits, series{label, c, false, f.Latency.Curve})
		}
		if f := row.PerClient; f.OK() && f.Latency != nil {
			waits = append(waits, series{label + ", a client each", c, true, f.Latency.Curve})
		}
	}
	curvePanel(&b, 70, 430, "acquire+release, uncontended (dashed: 2 of 5 nodes hung)", uncontended)
	curvePanel(&b, 540, 900, fmt.Sprintf("wait for one key, %d goroutines: 1 client (dashed: 8)", HandoffGoroutines), waits)
	legend(&b, uncontended)
	barPanel(&b, r)
	if hasFaults(r) {
		faultsPanel(&b, r, float64(faultsTop))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// text writes a text element; s is escaped.
func text(b *strings.Builder, x, y float64, anchor string, size int, s string) {
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="%s" font-size="%d">%s</text>`+"\n", x, y, anchor, size, escape(s))
}

func escape(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// nines maps a quantile to the chart's x scale: p50 at 0.3, p90 at 1, p99
// at 2, p99.9 at 3.
func nines(q float64) float64 { return math.Log10(1 / (1 - q)) }

// curvePanel draws the percentile curves of ss between x0 and x1, with a
// log scale of latency.
func curvePanel(b *strings.Builder, x0, x1 float64, title string, ss []series) {
	y0, y1 := float64(curveTop), float64(curveTop+curveHeight)
	text(b, x0, y0-12, "start", 13, title)
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#999"/>`+"\n", x0, y0, x1-x0, y1-y0)
	if len(ss) == 0 {
		text(b, (x0+x1)/2, (y0+y1)/2, "middle", 12, "no figures")
		return
	}
	lo, hi := decades(ss)
	qx := func(q float64) float64 { return x0 + (nines(q)-nines(0.5))/(nines(0.999)-nines(0.5))*(x1-x0) }
	vy := func(us float64) float64 {
		return y1 - (math.Log10(max(us, math.Pow(10, lo)))-lo)/(hi-lo)*(y1-y0)
	}
	for _, t := range []struct {
		q     float64
		label string
	}{{0.5, "p50"}, {0.9, "p90"}, {0.99, "p99"}, {0.999, "p99.9"}} {
		x := qx(t.q)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x, y0, x, y1)
		text(b, x, y1+16, "middle", 11, t.label)
	}
	for d := lo; d <= hi; d++ {
		y := vy(math.Pow(10, d))
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x0, y, x1, y)
		text(b, x0-6, y+4, "end", 11, durationLabel(math.Pow(10, d)))
	}
	for _, s := range ss {
		var pts []string
		for _, p := range s.points {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", qx(p.Q), vy(p.Micros)))
		}
		dash := ""
		if s.dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s><title>%s</title></polyline>`+"\n",
			strings.Join(pts, " "), s.colour, dash, escape(s.label))
	}
}

// decades returns the powers of ten (of µs) below and above every point
// of ss.
func decades(ss []series) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for _, p := range s.points {
			v := math.Log10(max(p.Micros, 0.1))
			lo, hi = min(lo, math.Floor(v)), max(hi, math.Ceil(v))
		}
	}
	if hi <= lo {
		hi = lo + 1
	}
	return lo, hi
}

// durationLabel prints a power of ten of µs as a duration.
func durationLabel(us float64) string {
	switch {
	case us >= 1e6:
		return fmt.Sprintf("%gs", us/1e6)
	case us >= 1e3:
		return fmt.Sprintf("%gms", us/1e3)
	}
	return fmt.Sprintf("%gµs", us)
}

// legend draws a line of each series' colour, dash and label, under the
// percentile panels.
func legend(b *strings.Builder, ss []series) { legendAt(b, ss, legendTop) }

// legendAt draws the legend of ss from y down.
func legendAt(b *strings.Builder, ss []series, y float64) {
	x := 70.0
	for _, s := range ss {
		w := 40 + 7.5*float64(len(s.label))
		if x+w > svgWidth-20 {
			x, y = 70, y+18
		}
		dash := ""
		if s.dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>`+"\n", x, y-4, x+24, y-4, s.colour, dash)
		text(b, x+30, y, "start", 12, s.label)
		x += w
	}
}

// The two bar panels, side by side: handoffs on the left, throughput on
// the right; the drivers' names are left of both.
const (
	handoffLeft, handoffRight = 120, 440
	keysLeft, keysRight       = 560, 870
)

// barPanel draws each driver's handoff rates, with one client and with a
// client per goroutine, and its throughput on distinct keys, as bars.
func barPanel(b *strings.Builder, r *Report) {
	text(b, 20, barsTop, "start", 13, fmt.Sprintf("handoffs/s: %d goroutines take turns at one key, holding it %s",
		HandoffGoroutines, r.Hold))
	text(b, 20, barsTop+16, "start", 11, "solid: one client; pale: a client each")
	text(b, keysLeft-10, barsTop, "start", 13, fmt.Sprintf("throughput: %d goroutines, a key each (ops/s)", KeysGoroutines))
	text(b, keysLeft-10, barsTop+16, "start", 11, "the scale ends at the fastest server; memory's bar runs off it")
	handoffs, keys := 0.0, 0.0
	for _, row := range r.Rows {
		handoffs = max(handoffs, row.Shared.PerSecond, row.PerClient.PerSecond)
		if Networked(row.Driver) || len(r.Rows) == 1 {
			keys = max(keys, row.Keys16.PerSecond)
		}
	}
	for i, row := range r.Rows {
		y := float64(barsTop + 28 + i*barRowHeight)
		text(b, handoffLeft-8, y+18, "end", 12, driverLabel(row))
		bar(b, handoffLeft, handoffRight, y, row.Shared, handoffs, colour(row.Driver), 1)
		bar(b, handoffLeft, handoffRight, y+18, row.PerClient, handoffs, colour(row.Driver), 0.45)
		bar(b, keysLeft, keysRight, y+9, row.Keys16, keys, colour(row.Driver), 1)
	}
}

// bar draws one bar from left at y for f's rate; a rate of top reaches
// right. A longer one is cut at right, with a break mark.
func bar(b *strings.Builder, left, right int, y float64, f Figures, top float64, c string, opacity float64) {
	if !f.OK() {
		text(b, float64(left), y+12, "start", 11, figure(f, nil))
		return
	}
	w, cut := 0.0, false
	if top > 0 {
		w = f.PerSecond / top * float64(right-left)
	}
	if w > float64(right-left) {
		w, cut = float64(right-left), true
	}
	fmt.Fprintf(b, `<rect x="%d" y="%.1f" width="%.1f" height="15" fill="%s" fill-opacity="%.2f"/>`+"\n", left, y, w, c, opacity)
	if cut {
		x := float64(left) + w - 12
		fmt.Fprintf(b, `<path d="M%.1f,%.1f l4,15 M%.1f,%.1f l4,15" stroke="#fff" stroke-width="2"/>`+"\n", x, y, x+5, y)
	}
	text(b, float64(left)+w+6, y+12, "start", 11, fmt.Sprintf("%.0f", f.PerSecond))
}
