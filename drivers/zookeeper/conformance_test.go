package zookeeper_test

import (
	"testing"
	"time"

	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/zookeeper"
	"github.com/distlock/lock/drivertest"
)

// TestConformance runs the suite, fault cases included, on clients opened
// by DSN.
func TestConformance(t *testing.T) {
	e := theEnsemble(t)
	e.healthy(t, 30*time.Second)
	full, _ := dsn(t)
	conformance.Run(t, conformance.Harness{
		NewClient:       drivertest.NewClient("zookeeper", full),
		NewDialerClient: drivertest.NewDialerClient("zookeeper", full),
		NewConn:         func(t *testing.T) driver.Conn { return drivertest.Connect(t, zookeeper.Driver{}, full) },
		NewScratchConn: func(t *testing.T, name string) driver.Conn {
			return drivertest.Connect(t, zookeeper.Driver{}, dsnAt(t, "/distlock-test/"+name))
		},
		Fencing: true,
		Extend:  true,
		Wakeups: true,
		TTL:     timeouts.TTL,
		Faults:  e,
		// An identity that the ACL of a root of its own refuses.
		Misconfigured: refusedIdentityClient,
	})
}
