package conformance_test

import (
	"testing"

	"github.com/distlock/lock/conformance"
)

// TestConformance_quorum runs the suite, fault cases included, on the
// quorum driver of quorum_driver_test.go with 1, 3 and 5 nodes.
func TestConformance_quorum(t *testing.T) {
	for _, n := range []int{1, 3, 5} {
		t.Run(string(rune('0'+n))+"nodes", func(t *testing.T) {
			conformance.Run(t, quorumHarness(t, quorumConfig{nodes: n}))
		})
	}
}
