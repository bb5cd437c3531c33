package leakcheck_test

import (
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock/internal/leakcheck"
)

func parked(stop <-chan struct{}) { <-stop }

func TestWait_findsALeakAndItsEnd(t *testing.T) {
	stop := make(chan struct{})
	go parked(stop)
	leaked := leakcheck.Wait(50 * time.Millisecond)
	if !strings.Contains(leaked, "leakcheck_test.parked") {
		t.Fatalf("Wait did not report the parked goroutine; it reported:\n%s", leaked)
	}
	close(stop)
	if leaked := leakcheck.Wait(5 * time.Second); leaked != "" {
		t.Fatalf("Wait reported goroutines after they ended:\n%s", leaked)
	}
}
