package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
)

// TestStatus_election: --election shows an election's leader (its term's
// ID, the value it campaigned with, its token) and a vacant election as
// such, as a table and as JSON, over PostgreSQL.
func TestStatus_election(t *testing.T) {
	b := pgBackend(t)
	c := b.client(t)
	led, vacant := testKey(t), testKey(t)
	e, err := c.Election(led, lock.WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	// A pod's DNS name and port: longer than the 27 bytes leader values
	// were once limited to (issue 29).
	const value = "scheduler-0.scheduler.default.svc.cluster.local:8080"
	term, err := e.Campaign(t.Context(), value)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { term.Resign(t.Context()) })
	tok, _ := term.Token()

	r := runDistlock(t, nil, append(append([]string{"status", "--election"}, b.flags()...), led, vacant)...)
	r.want(t, 0)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "ELECTION LEADER VALUE TOKEN EXPIRES IN" {
		t.Fatalf("status --election printed %q; want a header and two rows", r.stdout)
	}
	if row := strings.Fields(lines[1]); len(row) != 5 || row[0] != led || row[1] != term.Lock().ID() || row[2] != value || row[3] != tok.String() {
		t.Errorf("led election's row %q; want %s %s %s %s and the time left", lines[1], led, term.Lock().ID(), value, tok)
	}
	if got := strings.Join(strings.Fields(lines[2]), " "); got != vacant+" (none) - - -" {
		t.Errorf("vacant election's row %q", lines[2])
	}

	r = runDistlock(t, nil, append(append([]string{"status", "--election", "--json"}, b.flags()...), led)...)
	r.want(t, 0)
	var got []keyStatus
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got) != 1 {
		t.Fatalf("--json printed %q (%v); want an array of one object", r.stdout, err)
	}
	if g := got[0]; !g.Held || g.Holder != term.Lock().ID() || g.Value == nil || *g.Value != value || g.Token == nil || *g.Token != uint64(tok) {
		t.Errorf("led election's object: %s", r.stdout)
	}
}
