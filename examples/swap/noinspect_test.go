package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/memory"
)

// noInspect is the memory driver without driver.Inspector: a driver that
// cannot tell who holds a key, but can extend leases.
type noInspect struct{}

func (noInspect) OpenConnector(dsn string) (driver.Connector, error) {
	c, err := memory.Driver{}.OpenConnector(dsn)
	return noInspectConnector{c}, err
}

type noInspectConnector struct{ driver.Connector }

func (c noInspectConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return struct {
		driver.Conn
		driver.Extender
	}{conn, conn.(driver.Extender)}, nil
}

func init() { lock.Register("memory-noinspect", noInspect{}) }

// TestRun_inspectUnsupported runs the example on a driver without Inspect:
// it skips that step, saying so, and does everything else.
func TestRun_inspectUnsupported(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, &out, "memory-noinspect", "swap-test", 100*time.Millisecond); err != nil {
		t.Fatalf("run: %v\n%s", err, &out)
	}
	if n := strings.Count(out.String(), "inspect: this driver cannot tell who holds a key; skipped"); n != 2 {
		t.Errorf("Inspect skipped %d times, want 2:\n%s", n, &out)
	}
	if !strings.Contains(out.String(), "do: done and released") {
		t.Errorf("output lacks Do's end:\n%s", &out)
	}
}
