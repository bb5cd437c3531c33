package mongodb

import "time"

// ShortenTimingForTest sets the acquisition deadline, the pruning delay
// and the housekeeper's tick, and returns a function that restores them.
// Only for tests that run alone (not in parallel with other tests of the
// package), before they open connections.
func ShortenTimingForTest(grace, prune, tick time.Duration) (restore func()) {
	g, p, t := insertGrace, pruneDelay, housekeepingTick
	insertGrace, pruneDelay, housekeepingTick = grace, prune, tick
	return func() { insertGrace, pruneDelay, housekeepingTick = g, p, t }
}

// GrantID and HeadID expose the documents' ids to tests.
var (
	GrantID = grantID
	HeadID  = headID
)
