package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// go-redis logs its connection pool's events (a connection closed by a
// hook, a failed dial) on stderr by itself, unprefixed, even when every
// command succeeds. Those that matter come back as errors, which distlock
// prints; the rest would break the promise that a successful run prints
// nothing of its own.
func init() { redis.SetLogger(quietRedis{}) }

// quietRedis is a go-redis logger that drops everything.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

// lockedWriter makes the lines that distlock's goroutines print on stderr
// one Write each, one at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// warnHandler is the slog.Handler of the clients distlock opens. It
// prints the core's warnings (a lock lost while kept alive and why, a
// release that failed) on one line each, prefixed as distlock's own
// messages, and drops the rest. The core's logs never hold a DSN.
type warnHandler struct {
	w      io.Writer
	prefix string      // "distlock: CMD: "
	attrs  []slog.Attr // from WithAttrs
}

func (h *warnHandler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= slog.LevelWarn
}

// Handle prints "PREFIX MESSAGE (key "K") (NAME=VALUE...): ERR".
func (h *warnHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	var cause string
	b.WriteString(h.prefix + r.Message)
	each := func(a slog.Attr) bool {
		switch a.Key {
		case "err":
			cause = a.Value.String()
		case "key":
			fmt.Fprintf(&b, " (key %q)", a.Value.String())
		default:
			fmt.Fprintf(&b, " (%s=%s)", a.Key, a.Value.String())
		}
		return true
	}
	for _, a := range h.attrs {
		each(a)
	}
	r.Attrs(each)
	if cause != "" {
		b.WriteString(": " + cause)
	}
	_, err := io.WriteString(h.w, oneLine(b.String())+"\n")
	return err
}

func (h *warnHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &warnHandler{w: h.w, prefix: h.prefix, attrs: append(h.attrs[:len(h.attrs):len(h.attrs)], attrs...)}
}

// WithGroup returns h: groups are flattened (the core uses none).
func (h *warnHandler) WithGroup(string) slog.Handler { return h }
