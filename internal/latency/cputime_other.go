//go:build !unix

package latency

import (
	"runtime/metrics"
	"time"
)

// CPUTime returns the CPU time the process has used so far, as the Go
// runtime estimates it: its Ps' time less their idle time. The kernel's
// own accounting is used where there is one (cputime_unix.go).
func CPUTime() time.Duration {
	s := []metrics.Sample{{Name: "/cpu/classes/total:cpu-seconds"}, {Name: "/cpu/classes/idle:cpu-seconds"}}
	metrics.Read(s)
	return time.Duration((s[0].Value.Float64() - s[1].Value.Float64()) * float64(time.Second))
}
