//go:build unix

package latency

import (
	"syscall"
	"time"
)

// CPUTime returns the CPU time the process has used so far, user and
// system, as the kernel accounts it.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
