package goredis_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/distlock/lock/drivers/goredis"
	"github.com/distlock/lock/internal/redistest"
)

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	// go-redis logs every failed dial, and the fault tests cause many.
	redis.SetLogger(quiet{})
	redistest.Main(m)
}

func TestConformance(t *testing.T) { redistest.Conformance(t, "goredis", goredis.Driver{}) }

// Drop deletes locks and fencing counters of its prefix only.
func TestDrop(t *testing.T) { redistest.Drop(t, goredis.Driver{}) }

// ListScratch lists the key prefixes under a prefix, found on every node.
func TestListScratch(t *testing.T) { redistest.ListScratch(t, goredis.Driver{}) }

// TestMeasureHung is a measurement, run when redistest.MeasureEnv is set.
func TestMeasureHung(t *testing.T) { redistest.MeasureHung(t, "goredis") }

func TestAcquire_misconfiguredEndsAtOnce(t *testing.T) {
	redistest.MisconfiguredEndsAtOnce(t, "goredis")
}

func TestAcquire_refusedEverywhereEndsAfterMaxUnavailable(t *testing.T) {
	redistest.RefusedEverywhereEndsAfterMaxUnavailable(t, "goredis")
}

func TestTryAcquire_hungMajorityFailsFast(t *testing.T) {
	redistest.HungMajorityFailsFast(t, "goredis")
}

func TestTryAcquire_silentServersEndAtTheNodeTimeout(t *testing.T) {
	redistest.SilentServersEndAtTheNodeTimeout(t, "goredis")
}

// What CheckSettings finds on the test servers, and on servers set up to
// break its rules.
func TestCheckSettings(t *testing.T) { redistest.Settings(t, "goredis") }

// With every node healthy and the machine saturated, no operation fails
// and none stalls.
func TestTryAcquire_noFalseOutages(t *testing.T) { redistest.NoFalseOutages(t, "goredis") }

// TestMeasureSaturated is a measurement, run when redistest.SaturatedEnv
// is set.
func TestMeasureSaturated(t *testing.T) { redistest.MeasureSaturated(t, "goredis") }
