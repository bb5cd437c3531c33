package goredis_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/driver"
	_ "github.com/distlock/lock/drivers/goredis"
	"github.com/distlock/lock/internal/leakcheck"
	"github.com/distlock/lock/internal/redistest"
)

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	// go-redis logs every failed dial, and the fault tests cause many.
	redis.SetLogger(quiet{})
	code := redistest.Exclusive(m)
	if code == 0 {
		if leaked := leakcheck.Wait(5 * time.Second); leaked != "" {
			os.Stderr.WriteString("leakcheck: goroutines still running after the tests:\n\n" + leaked + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// testQuery makes the per-node timeout roomier than the default: the tests
// share two cores with the race detector and other packages' tests.
const testQuery = "node_timeout=250ms"

func harness(t *testing.T, addrs []string, query string, faults conformance.Faults) conformance.Harness {
	dsn := redistest.DSN(addrs, query)
	open := func(t *testing.T) *lock.Client {
		c, err := lock.Open("goredis", dsn)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return conformance.Harness{
		NewClient: open,
		NewConn: func(t *testing.T) driver.Conn {
			c, err := (lockDriver(t)).Open(dsn)
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
		Fencing: strings.Contains(query, "fencing=true"),
		Extend:  true,
		Wakeups: true,
		TTL:     time.Second,
		Faults:  faults,
	}
}

func TestConformance(t *testing.T) {
	addrs := redistest.Servers(t)
	t.Run("N=1", func(t *testing.T) {
		conformance.Run(t, harness(t, addrs[:1], testQuery, nil))
	})
	t.Run("N=5", func(t *testing.T) {
		conformance.Run(t, harness(t, addrs, testQuery, redistest.NewFaults(t, 5)))
	})
	t.Run("N=5/fencing", func(t *testing.T) {
		conformance.Run(t, harness(t, addrs, testQuery+"&fencing=true&key_prefix=fenced:", nil))
	})
}
