package zookeeper

import (
	"errors"
	"testing"
)

func TestScratchRoot(t *testing.T) {
	for _, tc := range []struct {
		root string
		ok   bool
	}{
		{"/distlock", false},
		{"/distlock/", false},
		{"/distlock/tmp", false},
		{"/zookeeper", false},
		{"/zookeeper/quota", false},
		{"/distlock-verify/run1", true},
		{"/distlockx", true},
		{"/app/locks", true},
	} {
		err := scratchRoot(tc.root)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrNotScratch)) {
			t.Errorf("scratchRoot(%q) = %v, want ok %v", tc.root, err, tc.ok)
		}
	}
}
