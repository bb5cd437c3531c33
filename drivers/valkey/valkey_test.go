package valkey_test

import (
	"testing"

	"github.com/distlock/lock/drivers/valkey"
	"github.com/distlock/lock/internal/redistest"
)

func TestMain(m *testing.M) { redistest.SuiteMain(m) }

func TestRedlockDriver(t *testing.T) { redistest.Suite(t, "valkey", valkey.Driver{}) }

// TestMeasureSaturated is a measurement, run when redistest.SaturatedEnv
// is set.
func TestMeasureSaturated(t *testing.T) { redistest.MeasureSaturated(t, "valkey") }
