//go:build race

package lock_test

// raceEnabled reports whether the race detector is on: it changes what
// allocates, so allocation counts are checked without it (make test runs
// those tests a second time, without -race).
const raceEnabled = true
