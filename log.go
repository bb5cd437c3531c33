package lock

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// SetLogger sets the logger the client reports unusual events to, at warn
// level. Such events are a lock lost while kept alive, and a release or
// cleanup that failed. Warnings of one kind come at most once per
// [WarnInterval] from a client. The next one says how many were left out
// (the attribute "suppressed"). At debug level, the client also logs every
// acquire, extend, release and [Client.Do] as it ends, without a limit.
// Each such record has the message "lock: OP" and the attributes key, err,
// attempts, wait, token and held (see [Event]). The default logger is
// [slog.Default], and nil restores it. SetLogger is safe to call at any
// time.
func (c *Client) SetLogger(l *slog.Logger) { c.logger.Store(l) }

// log returns the client's logger.
func (c *Client) log() *slog.Logger {
	if l := c.logger.Load(); l != nil {
		return l
	}
	return slog.Default()
}

// WarnInterval is the least time between two warnings of one kind (one
// message) from a client. During an outage every operation fails alike.
// One line per interval, with the count of those left out, says as much as
// thousands, and keeps the program's log readable.
const WarnInterval = 10 * time.Second

// warn logs msg at warn level, unless a warning with msg was logged less
// than WarnInterval ago. In that case it only counts the warning, for the
// next one to report.
func (c *Client) warn(ctx context.Context, msg string, args ...any) {
	l := c.log()
	if !l.Enabled(ctx, slog.LevelWarn) {
		return
	}
	left, ok := c.warns.allow(msg, time.Now())
	if !ok {
		return
	}
	if left > 0 {
		args = append(args, "suppressed", left)
	}
	l.WarnContext(ctx, msg, args...)
}

// warnLimiter keeps, by message, when its next warning may be logged and
// how many were left out since the last. Its zero value is ready to use.
type warnLimiter struct {
	mu    sync.Mutex
	kinds map[string]*warnKind
}

type warnKind struct {
	next time.Time // a warning before it is left out
	left int       // left out since the last logged
}

// allow reports whether a warning with msg may be logged at now, and how
// many were left out before it.
func (w *warnLimiter) allow(msg string, now time.Time) (left int, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.kinds == nil {
		w.kinds = make(map[string]*warnKind)
	}
	k := w.kinds[msg]
	if k == nil {
		k = &warnKind{}
		w.kinds[msg] = k // the messages are the package's constants: few
	}
	if now.Before(k.next) {
		k.left++
		return 0, false
	}
	left, k.left, k.next = k.left, 0, now.Add(WarnInterval)
	return left, true
}
