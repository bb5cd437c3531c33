package lock

import (
	"testing"
	"time"
)

// A kind of warning is logged at most once per WarnInterval, and the next
// one counts those left out; kinds are limited apart.
func TestWarnLimiter(t *testing.T) {
	var w warnLimiter
	t0 := time.Now()
	if left, ok := w.allow("a", t0); !ok || left != 0 {
		t.Fatalf("first warning: left %d, ok %v; want 0, true", left, ok)
	}
	for i := range 5 {
		if _, ok := w.allow("a", t0.Add(time.Duration(i+1)*time.Second)); ok {
			t.Fatalf("warning %d within the interval was allowed", i+2)
		}
	}
	if _, ok := w.allow("b", t0.Add(time.Second)); !ok {
		t.Error("another kind of warning was held back by the first kind's")
	}
	if left, ok := w.allow("a", t0.Add(WarnInterval)); !ok || left != 5 {
		t.Errorf("after the interval: left %d, ok %v; want 5, true", left, ok)
	}
	if left, ok := w.allow("a", t0.Add(2*WarnInterval)); !ok || left != 0 {
		t.Errorf("after a quiet interval: left %d, ok %v; want 0, true", left, ok)
	}
}
