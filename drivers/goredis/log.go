package goredis

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/redis/go-redis/v9"
)

// go-redis logs through one logger for the whole process (redis.SetLogger),
// to stderr by default: "failed to dial" for every failed connection
// attempt, which during a node's restart made four processes print 1,189
// lines in a minute. A connector opened by DSN routes those lines to
// slog.Default at debug level, where they are silent unless a program asks
// for debug output. A program that wants go-redis's lines elsewhere calls
// redis.SetLogger after lock.Open; a connector from New (clients the caller
// made) leaves the logger alone.
var quietOnce sync.Once

// quiet routes go-redis's log to slog at debug level, once per process.
func quiet() { quietOnce.Do(func() { redis.SetLogger(debugLog{}) }) }

// debugLog is a go-redis logger that writes to slog.Default at debug level.
type debugLog struct{}

func (debugLog) Printf(ctx context.Context, format string, v ...any) {
	l := slog.Default()
	if !l.Enabled(ctx, slog.LevelDebug) {
		return
	}
	l.DebugContext(ctx, fmt.Sprintf(format, v...), "logger", "go-redis")
}
