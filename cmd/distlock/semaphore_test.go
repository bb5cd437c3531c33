package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
)

// TestRun_maxRunsUnderAPermit: with --max 2, a run waits while both
// permits are held (exit 75 with --no-wait), runs once one is free with
// the permit's slot key in DISTLOCK_KEY, and exits 64 on another size;
// status --max 2 shows each held permit's slot and size.
func TestRun_maxRunsUnderAPermit(t *testing.T) {
	b := pgBackend(t)
	c := b.client(t)
	name := testKey(t)
	s, err := c.Semaphore(name, 2, lock.WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.TryAcquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { first.Release(t.Context()) })
	second, err := s.TryAcquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{"run"}, b.flags()...), "--key", name, "--max", "2")

	r := runDistlock(t, nil, append(args, "--no-wait", "--", "echo", "ran")...)
	r.want(t, exitHeld)
	if r.stdout != "" || !strings.Contains(r.stderr, "all 2 permits") {
		t.Errorf("--no-wait with both permits held: stdout %q, stderr %q", r.stdout, r.stderr)
	}

	st := runDistlock(t, nil, append(append([]string{"status"}, b.flags()...), "--max", "2", "--json", name)...)
	st.want(t, 0)
	var rows []keyStatus
	if err := json.Unmarshal([]byte(st.stdout), &rows); err != nil || len(rows) != 2 {
		t.Fatalf("status --max 2 --json printed %q (%v); want two permits", st.stdout, err)
	}
	for _, row := range rows {
		if !row.Held || row.Slot == nil || row.Permits != 2 || (row.Holder != first.ID() && row.Holder != second.ID()) {
			t.Errorf("a permit's object: %+v", row)
		}
	}

	if err := second.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	r = runDistlock(t, nil, append(args, "--wait", "10s", "--", "sh", "-c", `printf %s "$DISTLOCK_KEY"`)...)
	r.want(t, 0)
	if r.stdout != second.Key() {
		t.Errorf("CMD's DISTLOCK_KEY = %q, want the free permit's slot key %q", r.stdout, second.Key())
	}

	other := append(append([]string{"run"}, b.flags()...), "--key", name, "--max", "5", "--no-wait", "--", "echo", "ran")
	r = runDistlock(t, nil, other...)
	r.want(t, exitUsage)
	if r.stdout != "" || !strings.Contains(r.stderr, "size") {
		t.Errorf("--max 5 while permits of 2 are held: stdout %q, stderr %q", r.stdout, r.stderr)
	}
}
