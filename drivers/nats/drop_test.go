package nats_test

import (
	"errors"
	"testing"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/nats"
	"github.com/distlock/lock/drivertest"
)

// Drop refuses the default bucket, without contacting the servers about
// it: no bucket named, and distlock named.
func TestDrop_refusesTheDefaultBucket(t *testing.T) {
	for _, tc := range []struct{ name, dsn string }{
		{"noBucket", server(t) + "?create=false"},
		{"defaultNamed", server(t) + "?create=false&bucket=" + nats.DefaultBucket},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cn, err := nats.Driver{}.OpenConnector(tc.dsn)
			if err != nil {
				t.Fatal(err)
			}
			c, err := cn.Connect(drivertest.Context(t, timeouts.Request))
			if err != nil {
				t.Skipf("no default bucket on the test servers to connect to: %v", err)
			}
			defer c.Close()
			err = c.(driver.Dropper).Drop(t.Context())
			if !errors.Is(err, nats.ErrNotScratch) || !errors.Is(err, driver.ErrMisconfigured) {
				t.Errorf("Drop = %v, want an error matching ErrNotScratch and driver.ErrMisconfigured", err)
			}
		})
	}
}
