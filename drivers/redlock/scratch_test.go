package redlock

import (
	"context"
	"errors"
	"testing"

	"github.com/distlock/lock/driver"
)

func TestScratchName(t *testing.T) {
	for _, tc := range []struct {
		key, prefix, want string
		ok                bool
	}{
		{"distlock-verify/1a2b/{k}", "distlock-verify/", "distlock-verify/1a2b/", true},
		{"distlock-verify/1a2b/{k/1}:fence", "distlock-verify/", "distlock-verify/1a2b/", true},
		{"distlock-verify/1a2b/c/{k}", "distlock-verify/1", "distlock-verify/1a2b/", true},
		{"distlock-verify/1a2b{k/1}", "distlock-verify/", "", false}, // the '/' is the key's
		{"distlock-verify/1a2b{k}", "distlock-verify/", "", false},
		{"other/1a2b/{k}", "distlock-verify/", "", false},
	} {
		got, ok := scratchName(tc.key, tc.prefix)
		if got != tc.want || ok != tc.ok {
			t.Errorf("scratchName(%q, %q) = %q, %v; want %q, %v", tc.key, tc.prefix, got, ok, tc.want, tc.ok)
		}
	}
}

// ListScratch refuses an empty prefix, and a node that spreads keys over
// servers, without sending a command.
func TestListScratch_refusesWithoutAsking(t *testing.T) {
	for _, tc := range []struct {
		name   string
		prefix string
		node   Node
		want   error
	}{
		{"emptyPrefix", "", newFake("a"), driver.ErrMisconfigured},
		{"sharded", "scratch/", shardedNode{newFake("a")}, errors.ErrUnsupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := New([]Node{tc.node}, WithKeyPrefix("scratch/1a2b/"))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if got, err := r.ListScratch(context.Background(), tc.prefix); !errors.Is(err, tc.want) {
				t.Errorf("ListScratch(%q) = %q, %v; want an error matching %v", tc.prefix, got, err, tc.want)
			}
			var f *fakeNode
			switch n := tc.node.(type) {
			case *fakeNode:
				f = n
			case shardedNode:
				f = n.fakeNode
			}
			if f.asked != 0 {
				t.Errorf("ListScratch sent %d commands, want none", f.asked)
			}
		})
	}
}
