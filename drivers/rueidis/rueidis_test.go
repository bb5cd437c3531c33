package rueidis_test

import (
	"testing"

	"github.com/distlock/lock/drivers/rueidis"
	"github.com/distlock/lock/drivertest"
	"github.com/distlock/lock/internal/redistest"
)

func TestMain(m *testing.M) { drivertest.Main(m, drivertest.Alone("redis")) }

func TestConformance(t *testing.T) { redistest.Conformance(t, "rueidis", rueidis.Driver{}) }

func TestAcquire_misconfiguredEndsAtOnce(t *testing.T) {
	redistest.MisconfiguredEndsAtOnce(t, "rueidis")
}

func TestTryAcquire_hungMajorityFailsFast(t *testing.T) {
	redistest.HungMajorityFailsFast(t, "rueidis")
}

func TestTryAcquire_silentServersEndAtTheNodeTimeout(t *testing.T) {
	redistest.SilentServersEndAtTheNodeTimeout(t, "rueidis")
}
