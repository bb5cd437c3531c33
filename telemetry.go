package lock

import (
	"context"
	"log/slog"
	"time"

	"github.com/distlock/lock/fencing"
)

// An Observer is told of a client's operations, for telemetry. Package
// github.com/distlock/lock/telemetry adapts OpenTelemetry. A client
// without one (the default) pays nothing for it. See [Client.SetObserver].
//
// Its methods run on the operation's goroutine (Lost may run on a timer's)
// and must be safe for concurrent use and quick.
type Observer interface {
	// Start is called as an operation starts. op is "acquire" (Acquire,
	// TryAcquire, and Do's acquisition), "extend", "release" or "do". Start
	// returns the context the operation goes on with (carrying a span, say)
	// and a function that the client calls once, when the operation ends.
	Start(ctx context.Context, op, key string) (context.Context, func(Event))

	// Lost is called when the client learns that a lock on key is lost
	// (counted in Stats.Lost), with why.
	Lost(ctx context.Context, key string, why error)
}

// An Event is an operation that ended, as an [Observer] is told of it.
type Event struct {
	Op  string // as given to Observer.Start
	Key string
	Err error // nil if it succeeded

	// Attempts, Wait and Token describe acquisitions. Attempts is the
	// number of attempts made. It is 1 for TryAcquire, and 0 when a Release
	// of this client handed the lock over. Wait is the time from the call
	// to the outcome. Token is the token granted, if Fenced.
	Attempts int
	Wait     time.Duration
	Token    fencing.Token
	Fenced   bool

	// Held describes releases and Do. It is how long the lock was held,
	// from the clock reading taken before it was requested.
	Held time.Duration
}

// SetObserver sets the observer of the client's operations. nil, the
// default, removes it. SetObserver is safe to call at any time.
// Operations that started before it are reported to the observer they
// started with.
func (c *Client) SetObserver(o Observer) {
	if o == nil {
		c.observer.Store(nil)
		return
	}
	c.observer.Store(&o)
}

// An opTrace follows one operation for the observer, if any, and the debug
// log, if on. Its zero value follows nothing.
type opTrace struct {
	c     *Client
	done  func(Event) // the observer's; nil without one
	debug bool        // debug logging is on
	start time.Time
	op    string
	key   string
}

// trace starts following an operation, unless nothing would see it.
func (c *Client) trace(ctx context.Context, op, key string) (context.Context, opTrace) {
	obs := c.observer.Load()
	debug := c.log().Enabled(ctx, slog.LevelDebug)
	if obs == nil && !debug {
		return ctx, opTrace{}
	}
	t := opTrace{c: c, debug: debug, start: time.Now(), op: op, key: key}
	if obs != nil {
		ctx, t.done = (*obs).Start(ctx, op, key)
	}
	return ctx, t
}

// on reports whether anything follows the operation, so that a caller
// need not compute what end would drop.
func (t opTrace) on() bool { return t.c != nil }

// end reports the operation's end, with ev's outcome.
func (t opTrace) end(ctx context.Context, ev Event) {
	if t.c == nil {
		return
	}
	ev.Op, ev.Key = t.op, t.key
	if ev.Op == "acquire" {
		ev.Wait = time.Since(t.start)
	}
	if t.done != nil {
		t.done(ev)
	}
	if t.debug {
		t.c.log().DebugContext(ctx, "lock: "+ev.Op, "key", ev.Key, "err", ev.Err,
			"attempts", ev.Attempts, "wait", ev.Wait, "token", ev.Token, "held", ev.Held)
	}
}

// lost tells the observer, if any, that l is lost.
func (c *Client) lost(ctx context.Context, key string, why error) {
	if obs := c.observer.Load(); obs != nil {
		(*obs).Lost(ctx, key, why)
	}
}
