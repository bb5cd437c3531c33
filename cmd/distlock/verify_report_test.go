package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock/internal/procs"
)

// The table names the kinds of fault a run never dealt, and only those.
func TestPrintContention_namesFaultsNeverDealt(t *testing.T) {
	c := contention{driver: "postgres", workers: 3, keys: 2, duration: 4 * time.Second, ttl: time.Second}
	res := contentionResult{netFaults: true, namespace: "table distlock_verify_x", dropped: true, fenced: true}
	res.Faults = map[string]int{procs.ResetConnections: 1, procs.SlowConnections: 2}
	var out bytes.Buffer
	if err := printContention(&out, c, res, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "never dealt: "+procs.PauseHolder+" (") {
		t.Errorf("a run with no pause: the table does not say so:\n%s", out.String())
	}
	res.Faults[procs.PauseHolder] = 1
	out.Reset()
	if err := printContention(&out, c, res, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "never dealt") {
		t.Errorf("a run that dealt every kind: the table says one was never dealt:\n%s", out.String())
	}
}
