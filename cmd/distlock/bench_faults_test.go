package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBenchFaults_badUsageExits64(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"faultsWithoutDir":  {[]string{"--faults"}, "give --servers-dir"},
		"dirWithoutFaults":  {[]string{"--servers-dir", dir}, "only with --faults"},
		"noSuchDir":         {[]string{"--faults", "--servers-dir", filepath.Join(dir, "no", "such")}, "not a folder"},
		"shortBefore":       {[]string{"--faults", "--servers-dir", dir, "--faults-before", "100ms"}, "want 1s to 1m"},
		"shortLimit":        {[]string{"--faults", "--servers-dir", dir, "--faults-limit", "10ms"}, "want 1s to 10m"},
		"badBeforeDuration": {[]string{"--faults", "--servers-dir", dir, "--faults-before", "soon"}, "invalid value"},
	} {
		t.Run(name, func(t *testing.T) {
			r := benchResult(t, append([]string{"--driver", "memory"}, c.args...)...)
			r.wantCode(t, exitUsage)
			if r.stdout != "" || !strings.Contains(r.stderr, c.want) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("stdout %q, stderr %q: want one line on stderr, with %q", r.stdout, r.stderr, c.want)
			}
		})
	}
}

// TestBenchFaults_memoryHasNone: memory has no server, so the faults
// section has no entry for it, and bench stays speed-only without
// --faults. (The benchmark package's tests check that every networked
// driver measured has an entry.)
func TestBenchFaults_memoryHasNone(t *testing.T) {
	jsonPath := filepath.Join(t.TempDir(), "bench.json")
	r := benchResult(t, "--driver", "memory", "--duration", "20ms", "--faults", "--servers-dir", t.TempDir(), "--json", jsonPath)
	r.wantCode(t, exitOK)
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var report map[string]any
	if err := json.Unmarshal(b, &report); err != nil {
		t.Fatal(err)
	}
	if _, ok := report["faults"]; ok || strings.Contains(r.stdout, "faults:") || strings.Contains(r.stderr, "fault") {
		t.Errorf("a faults section for memory alone:\n%s\n%s", b, r.stdout)
	}
}
