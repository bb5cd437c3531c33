package redigo_test

import (
	"testing"

	"github.com/distlock/lock/drivers/redigo"
	"github.com/distlock/lock/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func TestConformance(t *testing.T) { redistest.Conformance(t, "redigo", redigo.Driver{}) }

// Drop deletes locks and fencing counters of its prefix only.
func TestDrop(t *testing.T) { redistest.Drop(t, redigo.Driver{}) }

// ListScratch lists the key prefixes under a prefix, found on every node.
func TestListScratch(t *testing.T) { redistest.ListScratch(t, redigo.Driver{}) }

// TestMeasureHung is a measurement, run when redistest.MeasureEnv is set.
func TestMeasureHung(t *testing.T) { redistest.MeasureHung(t, "redigo") }

func TestAcquire_misconfiguredEndsAtOnce(t *testing.T) {
	redistest.MisconfiguredEndsAtOnce(t, "redigo")
}

// TestAcquire_refusedEverywhereEndsAfterMaxUnavailable runs on goredis
// only: it waits lock.MaxUnavailable, and the rule is the core's and
// Redlock's, which both drivers share.

func TestTryAcquire_hungMajorityFailsFast(t *testing.T) { redistest.HungMajorityFailsFast(t, "redigo") }

func TestTryAcquire_silentServersEndAtTheNodeTimeout(t *testing.T) {
	redistest.SilentServersEndAtTheNodeTimeout(t, "redigo")
}

// What CheckSettings finds on the test servers, and on servers set up to
// break its rules.
func TestCheckSettings(t *testing.T) { redistest.Settings(t, "redigo") }

// With every node healthy and the machine saturated, no operation fails
// and none stalls.
func TestTryAcquire_noFalseOutages(t *testing.T) { redistest.NoFalseOutages(t, "redigo") }

// TestMeasureSaturated is a measurement, run when redistest.SaturatedEnv
// is set.
func TestMeasureSaturated(t *testing.T) { redistest.MeasureSaturated(t, "redigo") }
