package etcd_test

import (
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
)

// The test cluster (three members of a recent etcd) breaks no rule: it
// runs without fsync, which no client can see.
func TestCheckSettings(t *testing.T) {
	fs, err := open(t, dsn(t)).CheckSettings(drivertest.Context(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		t.Errorf("unexpected finding: %v", f)
	}
}
