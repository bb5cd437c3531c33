package redlock

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/distlock/lock/driver"
)

// failingNode is a Node whose every request fails with err, counted.
type failingNode struct {
	name  string
	err   error
	asked atomic.Int32
}

func (n *failingNode) Do(context.Context, []any) (any, error) {
	n.asked.Add(1)
	return nil, n.err
}
func (n *failingNode) Subscribe(context.Context) (Subscriber, error) { return nil, n.err }
func (n *failingNode) String() string                                { return n.name }
func (n *failingNode) Close() error                                  { return nil }

//lint:file-ignore ST1005 the Redis replies here are quoted verbatim, punctuation included.

// Node errors that retrying cannot fix, as the Redis clients report them.
var misconfiguredErrs = map[string]error{
	"WRONGPASS":         errors.New("WRONGPASS invalid username-password pair or user is disabled."),
	"NOAUTH":            errors.New("NOAUTH Authentication required."),
	"NOPERM":            errors.New("NOPERM User u has no permissions to run the 'evalsha' command"),
	"AUTH without one":  errors.New("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"),
	"unknown host":      &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}},
	"TLS to plain":      tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"},
	"a driver's marker": errors.Join(driver.ErrMisconfigured, errors.New("the server speaks TLS")),
}

// Node errors that retrying may fix.
var unavailableErrs = map[string]error{
	"refused":          &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)},
	"socket timeout":   &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded},
	"context deadline": context.DeadlineExceeded,
	"DNS failure":      &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "server misbehaving", Name: "x", IsTemporary: true}},
	"OOM":              errors.New("OOM command not allowed when used memory > 'maxmemory'."),
	"presumed hung":    errPresumedHung,
}

// A round that reached no quorum matches driver.ErrUnavailable, whatever
// its nodes' errors; it matches driver.ErrMisconfigured as well if a node
// refused the client for a reason that retrying cannot fix, and then says
// so.
func TestQuorumError_matchesUnavailableAndMisconfigured(t *testing.T) {
	quorumOf := func(err error) error {
		return &QuorumError{Op: "acquire", Nodes: 3, Quorum: 2, Errs: []error{
			&NodeError{Node: "a", Err: context.DeadlineExceeded},
			&NodeError{Node: "b", Err: err},
		}}
	}
	for name, err := range misconfiguredErrs {
		qe := quorumOf(err)
		if !errors.Is(qe, driver.ErrUnavailable) || !errors.Is(qe, driver.ErrMisconfigured) {
			t.Errorf("%s: %v: want it to match ErrUnavailable and ErrMisconfigured", name, qe)
		}
		if !strings.Contains(qe.Error(), "nodes misconfigured") {
			t.Errorf("%s: %q does not say that nodes are misconfigured", name, qe)
		}
	}
	for name, err := range unavailableErrs {
		qe := quorumOf(err)
		if !errors.Is(qe, driver.ErrUnavailable) || errors.Is(qe, driver.ErrMisconfigured) {
			t.Errorf("%s: %v: want it to match ErrUnavailable and not ErrMisconfigured", name, qe)
		}
		if !strings.Contains(qe.Error(), "nodes unavailable") {
			t.Errorf("%s: %q does not say that nodes are unavailable", name, qe)
		}
	}
}

// A failed acquisition is undone on the nodes that may have run it, and
// not on those that refused the connection or the client: their refusal
// proves that nothing ran there.
func TestAcquire_undoneOnlyWhereItMayHaveRun(t *testing.T) {
	for name, err := range map[string]error{"refused": unavailableErrs["refused"], "WRONGPASS": misconfiguredErrs["WRONGPASS"]} {
		t.Run(name, func(t *testing.T) {
			fs := []*fakeNode{newFake("node0"), newFake("node1")}
			failing := []*failingNode{{name: "node2", err: err}, {name: "node3", err: err}, {name: "node4", err: err}}
			nodes := []Node{fs[0], fs[1], failing[0], failing[1], failing[2]}
			r, e := New(nodes)
			if e != nil {
				t.Fatal(e)
			}
			defer r.Close()
			if _, e := r.Acquire(t.Context(), "k", "v", time.Second); !errors.As(e, new(*QuorumError)) {
				t.Fatalf("Acquire = %v, want a *QuorumError", e)
			}
			for _, f := range fs {
				for deadline := time.Now().Add(2 * time.Second); !slices.Contains(f.commands(), "RELEASE v"); time.Sleep(time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("%s, which said yes, was not undone: %v", f.name, f.commands())
					}
				}
			}
			time.Sleep(50 * time.Millisecond) // room for a stray undo
			for _, f := range failing {
				if n := f.asked.Load(); n != 1 {
					t.Errorf("%s, which failed with %q, got %d requests, want 1 (the SET, not undone)", f.name, err, n)
				}
			}
		})
	}
}

// openBreakers returns the fake nodes' Redlock (default settings) after
// the nodes in hung hang and the first rounds' timeouts open their
// breakers.
func openBreakers(t *testing.T, hung []int) (*Redlock, []*fakeNode) {
	t.Helper()
	r, fs := slowFakes(t, 5, time.Millisecond)
	for range 10 {
		if err := r.Ping(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	for _, i := range hung {
		fs[i].setHang(true)
	}
	// Rounds give the hung nodes up at once, but only their requests' own
	// timeouts, at the rounds' limit (MaxNodeTimeout here), open the
	// breakers.
	for deadline := time.Now().Add(5 * MaxNodeTimeout); ; {
		open := true
		for _, i := range hung {
			open = open && r.health[i].open()
		}
		if open {
			return r, fs
		}
		if time.Now().After(deadline) {
			t.Fatalf("rounds for %v did not open the hung nodes' breakers", 5*MaxNodeTimeout)
		}
		r.Acquire(t.Context(), "opening", "v", 10*time.Second)
		time.Sleep(100 * time.Millisecond)
	}
}

// With a hung majority whose breakers are open, a round that sends them
// probes waits for them only for its patience (the timeout without its
// backoff, 50ms here), not for the backed-off timeout that the probes
// get; the error names them. (Before, such a round waited up to
// MaxNodeTimeout, and a TryAcquire twice that.)
func TestAcquire_hungMajorityFailsWithinPatience(t *testing.T) {
	r, _ := openBreakers(t, []int{0, 1, 2})
	time.Sleep(r.roundTimeout(10*time.Second) + 50*time.Millisecond) // the probes out end: the next round sends its own
	if p, full := r.patience(10*time.Second), r.roundTimeout(10*time.Second); p != DefaultNodeTimeout || full <= 2*p {
		t.Fatalf("patience %v and timeout %v: want %v and a backed-off timeout", p, full, DefaultNodeTimeout)
	}
	start := time.Now()
	_, err := r.Acquire(t.Context(), "k", "v", 10*time.Second)
	took := time.Since(start)
	if !errors.Is(err, errPresumedHung) || !errors.Is(err, driver.ErrUnavailable) {
		t.Errorf("Acquire = %v, want nodes presumed hung", err)
	}
	if took < DefaultNodeTimeout || took > DefaultNodeTimeout+150*time.Millisecond {
		t.Errorf("Acquire took %v, want about the patience (%v)", took, DefaultNodeTimeout)
	}
	for _, i := range []int{0, 1, 2} {
		if !r.health[i].probing.Load() {
			t.Errorf("node %d: no probe out after the round: it should go on", i)
		}
	}
}

// Nodes that answer again are not given up on: their probes, answered
// within the patience, close their breakers, and the round that sent them
// succeeds.
func TestAcquire_probesAnsweredWithinPatienceCount(t *testing.T) {
	r, fs := openBreakers(t, []int{0, 1, 2})
	for _, f := range fs[:3] {
		f.setHang(false)
	}
	for deadline := time.Now().Add(3 * time.Second); r.health[0].probing.Load() || r.health[1].probing.Load() || r.health[2].probing.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the probes sent while the nodes hung did not end")
		}
	}
	if _, err := r.Acquire(t.Context(), "k", "v", 10*time.Second); err != nil {
		t.Fatalf("Acquire with the nodes answering again, their breakers open: %v", err)
	}
	for deadline := time.Now().Add(time.Second); r.health[0].open() || r.health[1].open() || r.health[2].open(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) { // a round decides at a quorum: the last probe may answer after it
			t.Fatal("breakers still open a second after the round that probed the nodes")
		}
	}
}

// The core's cleanup Release of a failed acquisition's value returns at
// once while the round's own undo is under way, instead of waiting a node
// timeout more on nodes that stopped answering.
func TestRelease_ofAFailedAcquisitionBeingUndoneReturnsAtOnce(t *testing.T) {
	r, fs := fakes(t, 5)
	for _, f := range fs[:3] {
		f.setHang(true)
		defer f.setHang(false)
	}
	_, err := r.Acquire(t.Context(), "k", "v", time.Second)
	if err == nil {
		t.Fatal("Acquire succeeded with 3 of 5 nodes hung")
	}
	start := time.Now()
	err = r.Release(t.Context(), "k", "v")
	if took := time.Since(start); !errors.Is(err, driver.ErrNotHeld) || took > 50*time.Millisecond {
		t.Errorf("Release of the failed value = %v after %v, want ErrNotHeld at once", err, took)
	}
}
