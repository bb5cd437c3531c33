package lock_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
)

// During an outage, every failed acquisition's cleanup fails too: the
// client logs one warning for them all, not one each.
func TestWarnings_rateLimited(t *testing.T) {
	down := &backendError{"backend down"}
	sc := &scriptedConn{
		onAcquire: func(context.Context, int, string) (driver.Lease, error) { return driver.Lease{}, down },
		onRelease: func(context.Context, int) error { return down },
	}
	c := openScripted(t, sc, false)
	var buf bytes.Buffer
	c.SetLogger(slog.New(slog.NewTextHandler(&buf, nil)))
	const n = 50
	for range n {
		if _, err := c.TryAcquire(t.Context(), "k"); err == nil {
			t.Fatal("TryAcquire succeeded on a backend that is down")
		}
	}
	if got := len(sc.releaseCalls()); got != n {
		t.Fatalf("%d cleanups, want %d: the test does not test what it says", got, n)
	}
	lines := strings.Count(buf.String(), "cleanup failed")
	if lines != 1 {
		t.Errorf("%d failed cleanups logged %d warnings, want 1 per %v:\n%s", n, lines, lock.WarnInterval, buf.String())
	}
	if !strings.Contains(buf.String(), "level=WARN") {
		t.Errorf("the warning is not at warn level:\n%s", buf.String())
	}
}
