package zookeeper_test

import (
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivertest"
)

// TestContention_tenThousand has 4 clients (2 goroutines each) take 4 keys
// in turn for n acquisitions in all, and checks the history: no two
// holdings of a key overlap, and tokens strictly increase. n is 10,000, or
// $DISTLOCK_ZOOKEEPER_ACQUISITIONS.
func TestContention_tenThousand(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: skipped with -short")
	}
	n := drivertest.Acquisitions(t, "DISTLOCK_ZOOKEEPER_ACQUISITIONS", 10000)
	theEnsemble(t).healthy(t, 30*time.Second)
	full, _ := dsn(t)
	rep := drivertest.Contention{
		Clients: []*lock.Client{open(t, full), open(t, full), open(t, full), open(t, full)},
		Keys:    []string{"contention/0", "contention/1", "contention/2", "contention/3"},
		N:       n,
		TTL:     5 * time.Second,
		Retry:   true,
	}.Run(t, drivertest.Context(t, 5*time.Minute), true)
	if rep.Failures != 0 {
		t.Errorf("%d of %d operations failed on a healthy ensemble (last: %v)", rep.Failures, n, rep.LastErr)
	}
}
