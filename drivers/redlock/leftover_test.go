package redlock

import (
	"errors"
	"testing"
	"time"

	"github.com/distlock/lock/driver"
)

// A release that did not reach some nodes (they stopped answering, and
// came back) leaves the released value there. If the release reached a
// quorum, the lock is released, and the same client's next acquisition of
// the key takes it, deleting its own old value first on those nodes. If
// it did not, the core still counts the lock as held, and the next
// acquisition must report the key held: taking it would make two holders.
func TestAcquire_afterAReleaseThatDidNotReachNodes(t *testing.T) {
	for _, c := range []struct {
		name     string
		n        int
		unheard  []int // the nodes the release does not reach
		released bool  // whether the release reached a quorum
		fencing  bool
	}{
		{"N=5, a minority missed", 5, []int{3, 4}, true, false},
		{"N=5, a minority missed, fencing", 5, []int{3, 4}, true, true},
		{"N=5, a majority missed", 5, []int{2, 3, 4}, false, false},
		{"N=5, a majority missed, fencing", 5, []int{2, 3, 4}, false, true},
		{"N=1", 1, []int{0}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, fs := fakes(t, c.n, WithFencing(c.fencing))
			ctx := t.Context()
			if _, err := r.Acquire(ctx, "k", "v1", time.Minute); err != nil {
				t.Fatal(err)
			}
			for _, f := range fs { // the Acquire returned at a quorum
				for deadline := time.Now().Add(5 * time.Second); f.valueOn("distlock:{k}") != "v1"; time.Sleep(time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("%s never took the lock", f.name)
					}
				}
			}
			for _, i := range c.unheard {
				fs[i].setHang(true)
			}
			err := r.Release(ctx, "k", "v1")
			if c.released != (err == nil) {
				t.Fatalf("Release = %v", err)
			}
			for _, i := range c.unheard {
				fs[i].setHang(false)
				if got := fs[i].valueOn("distlock:{k}"); got != "v1" {
					t.Fatalf("node %d holds %q after the release it missed, want v1", i, got)
				}
			}
			_, err = r.Acquire(ctx, "k", "v2", time.Minute)
			if !c.released {
				if !errors.Is(err, driver.ErrHeld) {
					t.Fatalf("Acquire after a release that reached no quorum = %v, want driver.ErrHeld: the lock it released is still held", err)
				}
				return
			}
			if errors.Is(err, driver.ErrHeld) {
				t.Fatalf("Acquire after this client's own release = %v: the only holder is the client's own released value", err)
			}
			if err != nil {
				t.Fatalf("Acquire after this client's own release: %v", err)
			}
			for _, i := range c.unheard { // the Acquire returned at a quorum
				for deadline := time.Now().Add(5 * time.Second); fs[i].valueOn("distlock:{k}") != "v2"; time.Sleep(time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("node %d holds %q, want v2", i, fs[i].valueOn("distlock:{k}"))
					}
				}
			}
		})
	}
}
