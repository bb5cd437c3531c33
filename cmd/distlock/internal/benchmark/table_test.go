package benchmark

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// tableLines writes r as a table and returns its lines: the title, a
// blank line, the group headings, the headers, a line per row, then the
// notes.
func tableLines(t *testing.T, r *Report) []string {
	t.Helper()
	var b strings.Builder
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	return strings.Split(b.String(), "\n")
}

func TestWriteTable_columnsAligned(t *testing.T) {
	r := sampleReport()
	lines := tableLines(t, r)
	table := lines[3 : 4+len(r.Rows)] // headers and rows
	// Right-aligned columns end where their headers end.
	for _, l := range table[1:] {
		if utf8.RuneCountInString(l) != utf8.RuneCountInString(table[0]) {
			t.Errorf("row %q is not as wide as the headers %q", l, table[0])
		}
	}
	// The headers end two spaces before the next column, or at the end.
	headers := []rune(table[0])
	var ends []int
	for i, h := range headers {
		if h != ' ' && (i+1 == len(headers) || (i+2 < len(headers) && headers[i+1] == ' ' && headers[i+2] == ' ')) {
			ends = append(ends, i)
		}
	}
	if len(ends) != 1+len(columns) {
		t.Fatalf("%d header columns, want %d: %q", len(ends), 1+len(columns), table[0])
	}
	for _, l := range table[1:] {
		row := []rune(l)
		for _, e := range ends[1:] { // the driver's column is left-aligned
			if row[e] == ' ' || (e+1 < len(row) && row[e+1] != ' ') {
				t.Errorf("row %q has no cell ending at column %d, where its header ends:\n%s", l, e, table[0])
			}
		}
	}
	// A group's heading starts where its first column does: two spaces
	// after the previous column's end.
	groups := []rune(lines[2])
	for i, c := range columns {
		if i > 0 && columns[i-1].group == c.group {
			continue
		}
		at := ends[i] + 3 // ends[i] is the previous column's
		if i == 0 {       // after the driver's column, as wide as its widest label
			at = len("goredis N=5") + 2
		}
		if got := string(groups[at:min(len(groups), at+len([]rune(c.group)))]); got != c.group {
			t.Errorf("group heading at column %d is %q, want %q:\n%s\n%s", at, got, c.group, lines[2], table[0])
		}
	}
}

func TestWriteTable_unitsInHeaders(t *testing.T) {
	headers := tableLines(t, sampleReport())[3]
	for _, want := range []string{"driver", "p50 µs", "p99 µs", "ops/s", "handoffs/s", "wait p50 ms", "p99 ms"} {
		if !strings.Contains(headers, want) {
			t.Errorf("headers %q lack %q", headers, want)
		}
	}
}

// row returns the fields of the table's row for driver label.
func row(t *testing.T, lines []string, label string) []string {
	t.Helper()
	for _, l := range lines {
		if strings.HasPrefix(l, label+" ") {
			return strings.Fields(strings.TrimPrefix(l, label))
		}
	}
	t.Fatalf("no row %q in\n%s", label, strings.Join(lines, "\n"))
	return nil
}

func TestWriteTable_figuresFailuresAndSkips(t *testing.T) {
	lines := tableLines(t, sampleReport())
	for _, c := range []struct {
		label string
		want  []string
	}{
		{"memory", []string{"1.19", "4.76", "900000", "870", "6.75", "27.0", "830", "5.80", "23.2", "-", "-"}},
		{"goredis N=5", []string{"366", "1464", "3900", "659", "9.01", "36.0", "168", "29.7", "119", "437", "1748"}},
		{"redigo N=5", []string{"400", "1600", "2300", "556", "13.1", "52.4", "183", "24.3", "97.2", "skipped", "skipped"}},
		{"postgres", []string{"211", "844", "failed", "skipped", "skipped", "skipped", "skipped", "skipped", "skipped", "-", "-"}},
	} {
		if got := row(t, lines, c.label); strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("row %s = %q, want %q", c.label, got, c.want)
		}
	}
	notes := strings.Join(lines, "\n")
	for _, want := range []string{
		"postgres, uncontended: 3 of 13 operations failed (the last: conn reset)",
		"postgres, 16 keys: failed: no operation succeeded: server down",
		"skipped mongodb: no answer within 3s",
		"scripts/services.sh up",
		"2 of 5 nodes hung: uncontended, on 5 redis-server processes of bench's own",
		"holding it 1ms",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "interrupted:") {
		t.Errorf("a complete run is said to be interrupted:\n%s", notes)
	}
}

func TestWriteTable_interruptedAndHungSkipped(t *testing.T) {
	r := sampleReport()
	r.Interrupted, r.HungNodes, r.HungSkipped, r.Skipped = true, "", "redis-server is not in PATH", nil
	notes := strings.Join(tableLines(t, r), "\n")
	for _, want := range []string{"interrupted: the figures are those measured until then", "2 of 5 nodes hung: skipped: redis-server is not in PATH."} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "scripts/services.sh") {
		t.Errorf("how to start servers, with none skipped:\n%s", notes)
	}
}

func TestWriteTable_longErrorsAbridged(t *testing.T) {
	r := sampleReport()
	r.Rows[3].Keys16.Error = "no operation succeeded: " + strings.Repeat("node timed out;\n", 100)
	for _, l := range tableLines(t, r) {
		if strings.HasPrefix(l, "postgres, 16 keys") && (utf8.RuneCountInString(l) > noteLength+40 || !strings.HasSuffix(l, "…")) {
			t.Errorf("note not abridged: %q", l)
		}
	}
}

func TestNumber_threeDigits(t *testing.T) {
	for v, want := range map[float64]string{0.123: "0.12", 1.19: "1.19", 12.34: "12.3", 123.4: "123", 12345.6: "12346"} {
		if got := number(v); got != want {
			t.Errorf("number(%v) = %q, want %q", v, got, want)
		}
	}
}
