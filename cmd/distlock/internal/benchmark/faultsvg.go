package benchmark

import (
	"fmt"
	"math"
	"strings"
)

// The faults panel's geometry, in pixels, below the bar panels: a small
// plot per driver, two to a row.
const (
	faultsHead    = 44  // the panel's title and note
	faultCellW    = 430 // a driver's plot, its axes' labels included
	faultCellH    = 124
	faultPlotH    = 72 // the plot itself
	faultCellLeft = 60 // a column's plot starts this far into its cell
)

// faultsHeight returns the panel's height for n drivers.
func faultsHeight(n int) int { return faultsHead + faultCellH*((n+1)/2) }

// hasFaults reports whether r holds a fault measured.
func hasFaults(r *Report) bool {
	for _, fr := range r.Faults {
		if fr.HasFault() && len(fr.Successes) > 0 {
			return true
		}
	}
	return false
}

// faultsPanel draws a small plot per driver of the acquisitions per
// second of its fault's load, per bucket, on a linear scale from 0 to its
// own peak, all on one time axis from the fault, with the longest gap
// and the time back to rate under it.
func faultsPanel(b *strings.Builder, r *Report, top float64) {
	frs := measuredFaults(r)
	text(b, 20, top, "start", 13, fmt.Sprintf("acquisitions/s through one fault per backend (%d goroutines, a key each, per %v)",
		FaultGoroutines, FaultBucket))
	text(b, 20, top+16, "start", 11, "each on its own scale, from 0; dashed: the fault")
	tMin, tMax := 0.0, 1.0
	for _, fr := range frs {
		tMin = min(tMin, -fr.FaultAtMS/1000)
		tMax = max(tMax, (float64(len(fr.Successes)*fr.BucketMS)-fr.FaultAtMS)/1000)
	}
	for i, fr := range frs {
		x0 := 20 + float64(i%2)*(faultCellW+40) + faultCellLeft
		x1 := x0 + faultCellW - faultCellLeft
		y0 := top + faultsHead + float64(i/2)*faultCellH + 16
		faultPlot(b, fr, label(r, fr.Driver), x0, x1, y0, tMin, tMax)
	}
}

// measuredFaults returns the faults of r that were measured.
func measuredFaults(r *Report) []FaultResult {
	var out []FaultResult
	for _, fr := range r.Faults {
		if fr.HasFault() && len(fr.Successes) > 0 {
			out = append(out, fr)
		}
	}
	return out
}

// label is the row label of driverName in r.
func label(r *Report, driverName string) string {
	for _, row := range r.Rows {
		if row.Driver == driverName {
			return driverLabel(row)
		}
	}
	return driverName
}

// faultPlot draws one driver's plot, from x0 to x1 and y0 down, for times
// tMin to tMax (seconds from the fault).
func faultPlot(b *strings.Builder, fr FaultResult, name string, x0, x1, y0, tMin, tMax float64) {
	y1 := y0 + faultPlotH
	perBucket := 1000 / float64(fr.BucketMS)
	peak := 1.0
	for _, n := range fr.Successes {
		peak = max(peak, float64(n)*perBucket)
	}
	peak = niceCeil(peak)
	tx := func(t float64) float64 { return x0 + (t-tMin)/(tMax-tMin)*(x1-x0) }
	vy := func(v float64) float64 { return y1 - v/peak*(y1-y0) }
	text(b, x0-faultCellLeft+4, y0-6, "start", 12, name+": "+fr.Summary)
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#bbb"/>`+"\n", x0, y0, x1-x0, y1-y0)
	text(b, x0-4, y0+9, "end", 10, fmt.Sprintf("%g/s", peak))
	text(b, x0-4, y1, "end", 10, "0")
	for t := math.Ceil(tMin); t <= tMax; t++ {
		text(b, tx(t), y1+12, "middle", 9, fmt.Sprintf("%+gs", t))
	}
	x := tx(0)
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#000" stroke-dasharray="4 3"/>`+"\n", x, y0, x, y1)
	pts := make([]string, 0, len(fr.Successes))
	for i, n := range fr.Successes {
		t := (float64(i*fr.BucketMS) + float64(fr.BucketMS)/2 - fr.FaultAtMS) / 1000
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", tx(t), vy(float64(n)*perBucket)))
	}
	fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5"><title>%s</title></polyline>`+"\n",
		strings.Join(pts, " "), colour(fr.Driver), escape(fr.Driver+": "+fr.Fault))
	text(b, x1, y1+26, "end", 10, fmt.Sprintf("%d failed; no acquisition for %s at most; back to rate after %s",
		fr.Failed, millis(fr.LongestGapMS), recovery(fr)))
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}
