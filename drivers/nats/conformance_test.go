package nats_test

import (
	"testing"

	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/nats"
	"github.com/distlock/lock/drivertest"
)

// TestConformance runs the suite, fault cases included, on clients opened
// by DSN, on one bucket of three replicas.
func TestConformance(t *testing.T) {
	c := theCluster(t)
	c.healthy(t)
	full := dsn(t)
	conformance.Run(t, conformance.Harness{
		NewClient:       drivertest.NewClient("nats", full),
		NewDialerClient: drivertest.NewDialerClient("nats", full),
		NewConn:         func(t *testing.T) driver.Conn { return drivertest.Connect(t, nats.Driver{}, full) },
		NewScratchConn: func(t *testing.T, name string) driver.Conn {
			return drivertest.Connect(t, nats.Driver{}, server(t)+"?"+drivertest.Query("bucket", name,
				"attempt_timeout", timeouts.Attempt.String(), "request_timeout", timeouts.Request.String()))
		},
		Fencing:       true,
		Extend:        true,
		Wakeups:       true,
		TTL:           timeouts.TTL,
		Faults:        c,
		Misconfigured: wrongPasswordClient,
	})
}
