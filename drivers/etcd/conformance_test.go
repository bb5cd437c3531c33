package etcd_test

import (
	"testing"
	"time"

	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/etcd"
	"github.com/distlock/lock/drivertest"
)

// TestConformance runs the suite, fault cases included, on clients opened
// by DSN.
func TestConformance(t *testing.T) {
	c := theCluster(t)
	c.healthy(t, 30*time.Second)
	full := dsn(t)
	conformance.Run(t, conformance.Harness{
		NewClient:       drivertest.NewClient("etcd", full),
		NewDialerClient: drivertest.NewDialerClient("etcd", full),
		NewConn:         func(t *testing.T) driver.Conn { return drivertest.Connect(t, etcd.Driver{}, full) },
		NewScratchConn: func(t *testing.T, name string) driver.Conn {
			return drivertest.Connect(t, etcd.Driver{}, dsnWithPrefix(t, name+"/"))
		},
		Fencing: true,
		Extend:  true,
		Wakeups: true,
		TTL:     timeouts.TTL,
		Faults:  c,
		// A wrong password, on the member with authentication.
		Misconfigured: wrongPasswordClient,
	})
}
