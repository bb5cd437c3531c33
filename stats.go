package lock

import "sync/atomic"

// Stats are a [Client]'s counters since it was opened, as returned by
// [Client.Stats].
type Stats struct {
	Acquired  uint64 // acquisitions that succeeded
	Contended uint64 // attempts that found the key held by someone else
	Failed    uint64 // attempts that failed otherwise: backend errors, answers that came too late
	Released  uint64 // releases that succeeded
	Extended  uint64 // extensions that succeeded in time
	Lost      uint64 // locks whose holder learned it had lost them before releasing them
}

type counters struct {
	acquired, contended, failed, released, extended, lost atomic.Uint64
}

func (c *counters) snapshot() Stats {
	return Stats{
		Acquired:  c.acquired.Load(),
		Contended: c.contended.Load(),
		Failed:    c.failed.Load(),
		Released:  c.released.Load(),
		Extended:  c.extended.Load(),
		Lost:      c.lost.Load(),
	}
}
