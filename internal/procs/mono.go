package procs

import (
	"time"

	"golang.org/x/sys/unix"
)

// monoBase relates this process's time.Time readings to CLOCK_MONOTONIC.
// It is a reading of that clock, taken at monoAt. The two readings cannot
// be taken at once. A process descheduled between them (on a loaded
// machine, for milliseconds) would shift all its times by that much
// against the other processes'. So of 200 tries, it keeps the one whose
// time.Now readings before and after bracket the clock's reading most
// tightly, and takes their middle.
var monoBase, monoAt = func() (int64, time.Time) {
	var (
		best    int64
		bestAt  time.Time
		bestGap time.Duration = -1
		ts      unix.Timespec
	)
	for range 200 {
		before := time.Now()
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			panic("procs: CLOCK_MONOTONIC: " + err.Error())
		}
		gap := time.Since(before)
		if bestGap < 0 || gap < bestGap {
			best, bestAt, bestGap = ts.Nano(), before.Add(gap/2), gap
		}
	}
	return best, bestAt
}()

// Mono returns t on CLOCK_MONOTONIC, in nanoseconds. Every process of the
// machine reads the same clock, so records of several processes compare.
func Mono(t time.Time) int64 { return monoBase + int64(t.Sub(monoAt)) }
