package etcd_test

import (
	"slices"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivertest"
)

// TestContention_memberKilled has 4 clients (2 goroutines each) take 4
// keys in turn for n acquisitions in all, kills the leader after a third of
// them and starts it again after two thirds, and checks the history: no two
// holdings of a key overlap, tokens strictly increase. Acquisitions that
// fail during the election are counted and tried again. n is 10,000, or
// $DISTLOCK_ETCD_ACQUISITIONS.
func TestContention_memberKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: skipped with -short")
	}
	n := drivertest.Acquisitions(t, "DISTLOCK_ETCD_ACQUISITIONS", 10000)
	cl := theCluster(t)
	cl.healthy(t, 30*time.Second)
	full := dsn(t)
	// The nemesis: the leader dies at n/3 acquisitions and comes back at 2n/3.
	phase := make(chan struct{}, 2)
	run := drivertest.Contention{
		Clients: []*lock.Client{open(t, full), open(t, full), open(t, full), open(t, full)},
		Keys:    []string{"contention/0", "contention/1", "contention/2", "contention/3"},
		N:       n,
		TTL:     5 * time.Second,
		Retry:   true,
		Done: func(done int) {
			if done == n/3 || done == 2*n/3 {
				phase <- struct{}{}
			}
		},
	}
	start := time.Now()
	var leader string
	var killedAt, restartedAt time.Duration
	run.Nemesis = func() {
		<-phase
		leader = leaderOf(t, cl.eps, 10*time.Second)
		i := slices.Index(cl.eps, leader)
		killedAt = time.Since(start)
		cl.Kill(t, i)
		t.Cleanup(func() { cl.Restart(t, i) }) // if the test stops first
		<-phase
		restartedAt = time.Since(start)
		cl.Restart(t, i)
	}
	rep := run.Run(t, drivertest.Context(t, 10*time.Minute), true)
	t.Logf("leader %s killed at %v, restarted at %v", leader, killedAt.Round(time.Millisecond), restartedAt.Round(time.Millisecond))
	// An election fails the operations in flight for about a second; more
	// than that is a driver that does not fail over.
	if rep.Failures > int64(n/20) {
		t.Errorf("%d of %d operations failed across one leader's death", rep.Failures, n)
	}
}
