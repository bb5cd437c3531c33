package nats_test

import (
	"testing"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/nats"
	"github.com/distlock/lock/drivertest"
)

// ListScratch lists the buckets that begin with a prefix, and nothing
// else.
func TestListScratch(t *testing.T) {
	drivertest.ListScratch(t, drivertest.ScratchNamed, func(t testing.TB, ns string) driver.Conn {
		c := drivertest.Connect(t, nats.Driver{}, server(t)+"?"+drivertest.Query("bucket", ns,
			"attempt_timeout", timeouts.Attempt.String(), "request_timeout", timeouts.Request.String()))
		t.Cleanup(func() { c.Close() })
		return c
	})
}
