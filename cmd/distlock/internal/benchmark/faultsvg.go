package benchmark

import (
	"fmt"
	"math"
	"strings"
)

// The faults panel's geometry, in pixels, below the handoffs panel.
const (
	faultsHeight = 260 // the plot's height
	faultsLeft   = 70
	faultsRight  = 900
)

// hasFaults reports whether r holds a fault measured.
func hasFaults(r *Report) bool {
	for _, fr := range r.Faults {
		if fr.HasFault() && len(fr.Successes) > 0 {
			return true
		}
	}
	return false
}

// faultsPanel draws the acquisitions per second of each fault's load,
// per bucket, one line per driver, on a log scale, with time from the
// fault; a rate of 0 is drawn on the bottom line.
func faultsPanel(b *strings.Builder, r *Report, top float64) {
	text(b, 20, top, "start", 13, fmt.Sprintf("acquisitions/s through one fault per backend (%d goroutines, a key each; per %v; log scale, 0 on the bottom line)",
		FaultGoroutines, FaultBucket))
	y0, y1 := top+20, top+20+faultsHeight
	x0, x1 := float64(faultsLeft), float64(faultsRight)
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#999"/>`+"\n", x0, y0, x1-x0, y1-y0)
	var frs []FaultResult
	tMin, tMax, hi := 0.0, 1.0, 10.0
	perBucket := 1000 / float64(FaultBucket.Milliseconds())
	for _, fr := range r.Faults {
		if !fr.HasFault() || len(fr.Successes) == 0 {
			continue
		}
		frs = append(frs, fr)
		tMin = min(tMin, -fr.FaultAtMS/1000)
		tMax = max(tMax, (float64(len(fr.Successes)*fr.BucketMS)-fr.FaultAtMS)/1000)
		for _, n := range fr.Successes {
			hi = max(hi, float64(n)*perBucket)
		}
	}
	lo, top10 := 1.0, math.Ceil(math.Log10(hi)) // from 10/s
	tx := func(t float64) float64 { return x0 + (t-tMin)/(tMax-tMin)*(x1-x0) }
	vy := func(v float64) float64 {
		if v < math.Pow(10, lo) {
			return y1
		}
		return y1 - (math.Log10(v)-lo)/(top10-lo)*(y1-y0)
	}
	for d := lo; d <= top10; d++ {
		y := vy(math.Pow(10, d))
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x0, y, x1, y)
		text(b, x0-6, y+4, "end", 11, fmt.Sprintf("%g", math.Pow(10, d)))
	}
	step := math.Max(1, math.Ceil((tMax-tMin)/12))
	for t := math.Ceil(tMin/step) * step; t <= tMax; t += step {
		x := tx(t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/>`+"\n", x, y0, x, y1)
		text(b, x, y1+16, "middle", 11, fmt.Sprintf("%+gs", t))
	}
	x := tx(0)
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#000" stroke-dasharray="4 3"/>`+"\n", x, y0, x, y1)
	text(b, x+4, y0+12, "start", 11, "fault")
	var ss []series
	for _, fr := range frs {
		var pts []string
		for i, n := range fr.Successes {
			t := (float64(i*fr.BucketMS) + float64(fr.BucketMS)/2 - fr.FaultAtMS) / 1000
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", tx(t), vy(float64(n)*perBucket)))
		}
		c := colour(fr.Driver)
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5"><title>%s</title></polyline>`+"\n",
			strings.Join(pts, " "), c, escape(fr.Driver+": "+fr.Fault))
		ss = append(ss, series{label: fr.Driver, colour: c})
	}
	legendAt(b, ss, y1+40)
}
