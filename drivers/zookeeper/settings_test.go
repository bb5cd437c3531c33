package zookeeper_test

import (
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
)

// The test ensemble (three members, whose session timeouts cover the
// default TTL) breaks no rule.
func TestCheckSettings(t *testing.T) {
	d, _ := dsn(t)
	fs, err := open(t, d).CheckSettings(drivertest.Context(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		t.Errorf("unexpected finding: %v", f)
	}
	if t.Failed() {
		t.Logf("the ensemble's config: see /zookeeper/config")
	}
}
