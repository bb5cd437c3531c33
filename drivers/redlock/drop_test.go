package redlock

import (
	"context"
	"errors"
	"testing"

	"github.com/distlock/lock/driver"
)

func TestScratchPrefix(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		ok     bool
	}{
		{"", false},
		{"d", false},
		{"distlock", false},
		{DefaultKeyPrefix, false},
		{DefaultKeyPrefix + "tmp:", false},
		{"verify-1a2b:", true},
		{"distlockx:", true},
		{"app:", true},
	} {
		err := scratchPrefix(tc.prefix)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrNotScratch)) {
			t.Errorf("scratchPrefix(%q) = %v, want ok %v", tc.prefix, err, tc.ok)
		}
	}
}

// Drop refuses a prefix that overlaps the default one, and a node that
// spreads keys over servers, without sending a command.
func TestDrop_refusesWithoutAsking(t *testing.T) {
	for _, tc := range []struct {
		name   string
		prefix string
		node   Node
		want   error
	}{
		{"defaultPrefix", DefaultKeyPrefix, newFake("a"), ErrNotScratch},
		{"emptyPrefix", "", newFake("a"), driver.ErrMisconfigured},
		{"sharded", "scratch:", shardedNode{newFake("a")}, errors.ErrUnsupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := New([]Node{tc.node}, WithKeyPrefix(tc.prefix))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if err := r.Drop(context.Background()); !errors.Is(err, tc.want) {
				t.Errorf("Drop = %v, want an error matching %v", err, tc.want)
			}
			var f *fakeNode
			switch n := tc.node.(type) {
			case *fakeNode:
				f = n
			case shardedNode:
				f = n.fakeNode
			}
			if f.asked != 0 {
				t.Errorf("Drop sent %d commands, want none", f.asked)
			}
		})
	}
}

// shardedNode is a fakeNode that says it spreads keys over servers.
type shardedNode struct{ *fakeNode }

func (shardedNode) Sharded() bool { return true }

func TestGlobEscape(t *testing.T) {
	for in, want := range map[string]string{
		"app:":      "app:",
		`a*b?c[d]e`: `a\*b\?c\[d\]e`,
		`x\y`:       `x\\y`,
	} {
		if got := globEscape(in); got != want {
			t.Errorf("globEscape(%q) = %q, want %q", in, got, want)
		}
	}
}
