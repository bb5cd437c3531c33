package etcd_test

import (
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/etcd"
	"github.com/distlock/lock/internal/testenv"
)

// TestConformance runs the suite, fault cases included, on clients opened
// by DSN.
func TestConformance(t *testing.T) {
	c := theCluster(t)
	c.healthy(t, 30*time.Second)
	full := dsn(t)
	conformance.Run(t, conformance.Harness{
		NewClient: func(t *testing.T) *lock.Client {
			l, err := lock.Open("etcd", full)
			if err != nil {
				t.Fatal(err)
			}
			return l
		},
		NewConn: func(t *testing.T) driver.Conn { return testenv.Connect(t, etcd.Driver{}, full) },
		Fencing: true,
		Extend:  true,
		Wakeups: true,
		TTL:     suiteTTL,
		Faults:  c,
	})
}
