package goredis_test

import (
	"testing"

	"github.com/distlock/lock/internal/redisbench"
)

// The benchmarks are written once, in internal/redisbench, for both Redlock
// drivers; against redsync they run in the bench module (bench/README.md).

func BenchmarkAcquireRelease(b *testing.B)        { redisbench.AcquireRelease(b, "goredis") }
func BenchmarkAcquireRelease_16keys(b *testing.B) { redisbench.AcquireRelease16keys(b, "goredis") }
func BenchmarkContended(b *testing.B)             { redisbench.Contended(b, "goredis") }
