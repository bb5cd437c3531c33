package rueidis_test

import (
	"testing"

	"github.com/distlock/lock/internal/redisbench"
)

// The benchmarks are written once, in internal/redisbench, for every Redlock
// drivers; against redsync they run in the bench module (bench/README.md).

func BenchmarkAcquireRelease(b *testing.B)        { redisbench.AcquireRelease(b, "rueidis") }
func BenchmarkAcquireRelease_16keys(b *testing.B) { redisbench.AcquireRelease16keys(b, "rueidis") }
func BenchmarkContended(b *testing.B)             { redisbench.Contended(b, "rueidis") }
