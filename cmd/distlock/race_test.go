//go:build race

package main

// raceEnabled is whether the tests run with the race detector.
const raceEnabled = true
