package rueidis_test

import (
	"testing"

	"github.com/distlock/lock/drivers/rueidis"
	"github.com/distlock/lock/internal/redistest"
)

func TestMain(m *testing.M) { redistest.SuiteMain(m) }

func TestRedlockDriver(t *testing.T) { redistest.Suite(t, "rueidis", rueidis.Driver{}) }

// TestMeasureSaturated is a measurement, run when redistest.SaturatedEnv
// is set.
func TestMeasureSaturated(t *testing.T) { redistest.MeasureSaturated(t, "rueidis") }
