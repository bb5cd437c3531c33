package conformance_test

import (
	"context"
	"sync"

	"github.com/distlock/lock/driver"
)

// The election cases must catch a driver that breaks a promise elections
// stand on. These variants join the others in TestSuiteCatchesBrokenDrivers.
func init() {
	for name, caught := range map[string][]string{
		"noMutualExclusion": {"Election_oneLeader"},
		"staleTokens":       {"Election_tokensIncrease", "Election_oneLeader"},
		"neverExpires":      {"Election_lostTermEndsByValidity"},
		"silentReleases":    {"Election_resignHandsOver"},
	} {
		v := variants[name]
		v.caught = caught
		variants["election_"+name] = v
	}
	variants["election_staleInspection"] = variant{
		harness: memoryHarness(func(in driver.Conn) driver.Conn { return staleInspection{base{in}} }),
		caught:  []string{"Election_observeSeesEachLeader", "Election_oneLeader"},
	}
}

// staleInspection reports the first holder it saw of a key, forever, as a
// lagging replica might.
type staleInspection struct{ base }

var firstHolders sync.Map // key -> driver.Holder

func (b staleInspection) Inspect(ctx context.Context, key string) (driver.Holder, bool, error) {
	if h, ok := firstHolders.Load(key); ok {
		return h.(driver.Holder), true, nil
	}
	h, held, err := b.base.Inspect(ctx, key)
	if held {
		firstHolders.Store(key, h)
	}
	return h, held, err
}
