package inflight_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/distlock/lock/drivers/internal/inflight"
)

var errTimedOut = errors.New("timed out")

// Close ends a call in flight and every call begun after it, and only
// those report EndedByClose; a call that ran out of time does not.
func TestCalls_closeEndsCalls(t *testing.T) {
	var c inflight.Calls
	late, doneLate := c.Begin(context.Background(), time.Millisecond, errTimedOut)
	defer doneLate()
	<-late.Done()
	if !errors.Is(context.Cause(late), errTimedOut) || c.EndedByClose(late) {
		t.Errorf("a call that ran out of time: cause %v, ended by Close %v", context.Cause(late), c.EndedByClose(late))
	}
	ctx, done := c.Begin(context.Background(), time.Minute, errTimedOut)
	defer done()
	if c.EndedByClose(ctx) || ctx.Err() != nil {
		t.Fatal("a call ended before Close")
	}
	c.Close()
	if ctx.Err() == nil || !c.EndedByClose(ctx) {
		t.Error("Close did not end the call in flight")
	}
	after, doneAfter := c.Begin(context.Background(), time.Minute, errTimedOut)
	defer doneAfter()
	if after.Err() == nil || !c.EndedByClose(after) {
		t.Error("a call begun after Close was not ended")
	}
}
