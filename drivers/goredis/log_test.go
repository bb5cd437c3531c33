package goredis_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock"
	_ "github.com/distlock/lock/drivers/goredis"
)

// syncBuffer is a bytes.Buffer for a handler that go-redis's goroutines
// may write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// go-redis's "failed to dial" lines go to slog at debug level, not to
// stderr: a program that does not ask for debug output sees none of them.
func TestGoRedisLog_routedToSlogAtDebug(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: every dial is refused

	var buf syncBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer slog.SetDefault(prev)

	c, err := lock.Open("goredis", "redis://"+addr+"?node_timeout=200ms")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetLogger(slog.New(slog.DiscardHandler)) // the core's own lines are not what is tested
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.TryAcquire(ctx, "k"); err == nil {
		t.Fatal("TryAcquire succeeded with no server")
	}
	out := buf.String()
	if !strings.Contains(out, "failed to dial") {
		t.Fatalf("go-redis's dial failure did not reach slog; slog saw:\n%s", out)
	}
	for line := range strings.Lines(out) {
		if strings.Contains(line, "failed to dial") && !strings.Contains(line, "level=DEBUG") {
			t.Errorf("go-redis's line is not at debug level: %s", line)
		}
	}
}
