package benchmark

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
)

// svgElements parses an SVG document and counts its elements by name,
// failing the test if it is not well-formed XML with an <svg> root.
func svgElements(t *testing.T, doc string) map[string]int {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(doc))
	counts := make(map[string]int)
	root := ""
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, doc)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = se.Name.Local
				if se.Name.Space != "http://www.w3.org/2000/svg" {
					t.Errorf("root's namespace %q", se.Name.Space)
				}
			}
			counts[se.Name.Local]++
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
	return counts
}

func writeSVG(t *testing.T, r *Report) string {
	t.Helper()
	var b strings.Builder
	if err := WriteSVG(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestWriteSVG_curvesAndBars(t *testing.T) {
	doc := writeSVG(t, sampleReport())
	counts := svgElements(t, doc)
	// Curves: uncontended for 4 rows, hung for goredis; waits with one
	// client and with 8 for memory, goredis, redigo (postgres's were not
	// measured).
	if want := 4 + 1 + 3*2; counts["polyline"] != want {
		t.Errorf("%d polylines, want %d", counts["polyline"], want)
	}
	// Bars: two handoff rates and a throughput for each of 3 rows, plus
	// the background and the two panels' frames.
	if want := 3*3 + 1 + 2; counts["rect"] != want {
		t.Errorf("%d rects, want %d", counts["rect"], want)
	}
	for _, want := range []string{"goredis N=5, 2 of 5 hung", "p99.9", "handoffs/s", "throughput: 16 goroutines", ">659<", ">skipped<", "100µs", "go1.26.8"} {
		if !strings.Contains(doc, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

func TestWriteSVG_selfContained(t *testing.T) {
	doc := writeSVG(t, sampleReport())
	for _, banned := range []string{"href", "<image", "url(", "@import", "<script", "<foreignObject"} {
		if strings.Contains(doc, banned) {
			t.Errorf("SVG contains %q: it must need nothing outside itself", banned)
		}
	}
	if n := strings.Count(doc, "http://"); n != 1 {
		t.Errorf("%d URLs in the SVG, want only its namespace", n)
	}
}

func TestWriteSVG_escapesAndEmpty(t *testing.T) {
	r := sampleReport()
	r.Machine.Go = `go<1.26 & "x"`
	svgElements(t, writeSVG(t, r))
	empty := &Report{Machine: r.Machine, Duration: "2s", Hold: "1ms"}
	doc := writeSVG(t, empty)
	svgElements(t, doc)
	if !strings.Contains(doc, "no figures") {
		t.Error("an empty report's chart does not say it has no figures")
	}
}

func TestNines_scale(t *testing.T) {
	for q, want := range map[float64]float64{0.9: 1, 0.99: 2, 0.999: 3} {
		if got := nines(q); got < want-1e-9 || got > want+1e-9 {
			t.Errorf("nines(%v) = %v, want %v", q, got, want)
		}
	}
}
