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

// A SET that got no answer may still be run by its node, after the
// attempt gave up, failed and was undone, and even after the client's
// next acquisition and release of the key: its value then holds the key
// there until its TTL, with no lock behind it. The client remembers such
// values (leftovers.addLate), and its next acquisitions take the key from
// them. Without that, the next acquisition was refused ("held by another
// holder") where a quorum's SETs had landed late, as under saturation.
func TestAcquire_afterLateSETs(t *testing.T) {
	for _, c := range []struct {
		name  string
		n     int
		late  []int // the nodes whose SETs land late
		after bool  // they land after the next acquisition and its release, not before it
	}{
		{"N=1, before the next acquisition", 1, []int{0}, false},
		{"N=1, after the next acquisition", 1, []int{0}, true},
		{"N=5, a majority, before the next acquisition", 5, []int{0, 1, 2}, false},
		{"N=5, a majority, after the next acquisition", 5, []int{0, 1, 2}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, fs := fakes(t, c.n)
			ctx := t.Context()
			const lk = "distlock:{k}"
			for _, i := range c.late {
				fs[i].setLateSets(true)
			}
			if _, err := r.Acquire(ctx, "k", "v1", time.Minute); err == nil {
				t.Fatal("Acquire with SETs unanswered on a quorum succeeded")
			}
			// Wait for the undo of the failed attempt on every node: it
			// finds nothing where the SET has not landed.
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
				if b := r.attempts.beingUndone(r.lockKey("k")); b == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the failed attempt is still being undone after 5s")
				}
			}
			for _, i := range c.late {
				fs[i].setLateSets(false)
			}
			land := func() {
				for _, i := range c.late {
					fs[i].landLate()
					if got := fs[i].valueOn(lk); got != "v1" {
						t.Fatalf("node %d holds %q after the late SET landed, want v1", i, got)
					}
				}
			}
			value := "v2"
			if c.after {
				if _, err := r.Acquire(ctx, "k", "v2", time.Minute); err != nil {
					t.Fatalf("Acquire before the late SETs landed: %v", err)
				}
				if err := r.Release(ctx, "k", "v2"); err != nil {
					t.Fatal(err)
				}
				for _, i := range c.late { // the Release returned at a quorum
					for deadline := time.Now().Add(5 * time.Second); fs[i].valueOn(lk) != ""; time.Sleep(time.Millisecond) {
						if time.Now().After(deadline) {
							t.Fatalf("node %d holds %q after the release, want nothing", i, fs[i].valueOn(lk))
						}
					}
				}
				value = "v3"
			}
			land()
			if _, err := r.Acquire(ctx, "k", value, time.Minute); err != nil {
				t.Fatalf("Acquire after late SETs of this client's failed attempt landed: %v", err)
			}
			for _, i := range c.late { // the Acquire returned at a quorum
				for deadline := time.Now().Add(5 * time.Second); fs[i].valueOn(lk) != value; time.Sleep(time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("node %d holds %q, want %s", i, fs[i].valueOn(lk), value)
					}
				}
			}
		})
	}
}

// A granted lease whose SET on a node got no answer, and whose
// acquisition ended before its release: the SET may land on that node
// after the release. The release remembers it (Redlock.lateSets), and the
// client's next acquisition takes the key from it there. Without that,
// with a rival's SET on another node of three, the next acquisition was
// refused: its own late value and the rival's made a majority of no.
func TestAcquire_afterALateSETOfAReleasedLease(t *testing.T) {
	r, fs := fakes(t, 3)
	ctx := t.Context()
	const lk = "distlock:{k}"
	fs[2].setLateSets(true)
	if _, err := r.Acquire(ctx, "k", "v1", time.Minute); err != nil {
		t.Fatal(err)
	}
	// Wait for the SET on node 2 to end unanswered, and for the attempt to
	// be forgotten, before the release.
	for deadline := time.Now().Add(5 * time.Second); r.attempts.straggler("v1") != nil; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the acquisition's requests are still out after 5s")
		}
	}
	fs[2].setLateSets(false)
	if err := r.Release(ctx, "k", "v1"); err != nil {
		t.Fatal(err)
	}
	for _, f := range fs[:2] { // the Release returned at a quorum
		for deadline := time.Now().Add(5 * time.Second); f.valueOn(lk) != ""; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s holds %q after the release", f.name, f.valueOn(lk))
			}
		}
	}
	fs[2].landLate()
	if got := fs[2].valueOn(lk); got != "v1" {
		t.Fatalf("node 2 holds %q after the late SET landed, want v1", got)
	}
	// Node 2 timed out: until the release's answer from it comes, the
	// client is degraded, and asks the key's healthy lead alone first,
	// which the rival below may hold. Wait for that answer.
	for deadline := time.Now().Add(5 * time.Second); r.degraded(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("node 2 is still unhealthy 5s after the release")
		}
	}
	fs[0].hold(lk, "rival", time.Minute) // a rival's SET, not yet undone
	if _, err := r.Acquire(ctx, "k", "v2", time.Minute); err != nil {
		t.Fatalf("Acquire with a rival on one node of three and this client's late SET on another: %v", err)
	}
}

// A released value whose release still has a request out stays a
// leftover after the client's next acquisition of the key has taken it:
// the value's SET on that node may land after that acquisition, and after
// its release (a worker goroutine that sends it late, on a busy machine).
// Found by MeasureSaturated on valkey-go: a goroutine's own value from
// six operations before, on one node, refused its next acquisition.
func TestAcquire_afterASETSentLate(t *testing.T) {
	r, fs := fakes(t, 3)
	ctx := t.Context()
	const lk = "distlock:{k}"
	fs[2].setNextSET(100*time.Millisecond, 400*time.Millisecond)
	if _, err := r.Acquire(ctx, "k", "a", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := r.Release(ctx, "k", "a"); err != nil { // at a quorum: its request to node 2 waits for the SET
		t.Fatal(err)
	}
	if _, err := r.Acquire(ctx, "k", "b", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := r.Release(ctx, "k", "b"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); fs[2].valueOn(lk) != "a"; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("node 2 holds %q, want the SET of a, landed late", fs[2].valueOn(lk))
		}
	}
	fs[0].hold(lk, "rival", time.Minute) // a rival's SET, not yet undone
	if _, err := r.Acquire(ctx, "k", "c", time.Minute); err != nil {
		t.Fatalf("Acquire with a rival on one node of three and this client's value a, sent late, on another: %v", err)
	}
}
