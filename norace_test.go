//go:build !race

package lock_test

const raceEnabled = false
