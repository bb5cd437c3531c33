package nats_test

import (
	"context"
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
)

// TestCheckSettings finds nothing wrong with a bucket the driver made on
// the test cluster, whose servers fsync every write: the settings check
// reads the fsync setting where the DSN names a monitoring endpoint.
func TestCheckSettings(t *testing.T) {
	for name, full := range map[string]string{
		"bucket":         dsn(t),
		"bucketAndFsync": dsn(t, "monitor", drivertest.Lookup(t, "DISTLOCK_NATS_MONITOR")),
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			fs, err := open(t, full).CheckSettings(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range fs {
				t.Errorf("finding on the test cluster: %v", f)
			}
		})
	}
}
