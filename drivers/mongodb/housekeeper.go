package mongodb

import (
	"context"
	"slices"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// housekeepingTick is how often the housekeeper looks for work (a
// variable for tests).
var housekeepingTick = 2 * time.Second

const (
	// housekeepingTimeout bounds each of its requests.
	housekeepingTimeout = 10 * time.Second
	// pruneBatch is how many grants one ordered delete covers at most.
	pruneBatch = 256
	// pruneKeysPerTick bounds the keys pruned at one tick.
	pruneKeysPerTick = 32
	// maxMarks bounds the marks a key keeps (see superseded); past it,
	// the newest mark takes the new inserts. With marks a tick apart and
	// due after pruneDelay, a key that is pruned needs about
	// pruneDelay/housekeepingTick + 2 of them (17 with the defaults).
	maxMarks = 64
	// headEvery says which fences raise the head document: every
	// headEvery-th. Updates are FerretDB's most expensive requests (each
	// holds two SQLite connections and waits for the write lock), and a
	// head that lags is only a longer probe.
	headEvery = 16
	// headQueue is how many head updates may wait; more are dropped (the
	// head is a hint).
	headQueue = 1024
)

// mark says that a key's grants below fence may be deleted from due on
// (the connection's monotonic clock). Inserts acknowledged within a tick
// of the mark's first (opened) join it: its fence rises to theirs, and
// its due moves later with them, never earlier.
type mark struct {
	fence       int64
	due, opened time.Time
}

// superseded is a key's marks, oldest first, with rising fences and dues.
// A tick prunes up to the highest mark that is due, so a busy key keeps
// the grants of its last pruneDelay and a tick or two, however fast it
// goes.
type superseded []mark

type headUpdate struct {
	key   string
	fence int64
}

// housekeeper is a connection's background goroutine: it raises head
// documents, measures the server's clock again every clockRefresh, forgets
// ended leases and deletes superseded grants (see "Housekeeping" in
// DESIGN.md).
type housekeeper struct {
	coll  *mongo.Collection
	clock *serverClock
	prune bool
	sweep func(time.Time)
	heads chan headUpdate
	// forgets asks the goroutine to drop its pending work, and is
	// answered by closing the channel sent.
	forgets chan chan struct{}

	mu      sync.Mutex
	pending map[string]superseded // by key
	floors  map[string]int64      // key -> every grant below it is deleted (only the housekeeper's goroutine uses it)

	cancel context.CancelFunc
	done   chan struct{}
}

func startHousekeeper(coll *mongo.Collection, clock *serverClock, prune bool, sweep func(time.Time)) *housekeeper {
	ctx, cancel := context.WithCancel(context.Background())
	h := &housekeeper{
		coll:    coll,
		clock:   clock,
		prune:   prune,
		sweep:   sweep,
		heads:   make(chan headUpdate, headQueue),
		forgets: make(chan chan struct{}),
		pending: make(map[string]superseded),
		floors:  make(map[string]int64),
		cancel:  cancel,
		done:    make(chan struct{}),
	}
	go h.run(ctx)
	return h
}

// inserted notes that key's grant fence was inserted, acknowledged at
// acked: the head document is raised soon, and the grants below fence are
// deleted pruneDelay later (see superseded).
func (h *housekeeper) inserted(key string, fence int64, acked time.Time) {
	if fence%headEvery == 0 {
		select {
		case h.heads <- headUpdate{key, fence}:
		default:
		}
	}
	if !h.prune || fence <= 1 {
		return
	}
	// The wait is stretched by the clocks' rate bound, so that it lasts
	// pruneDelay of real time.
	due := acked.Add(pruneDelay + pruneDelay/clockRate + clockResolution)
	h.mu.Lock()
	defer h.mu.Unlock()
	ms, ok := h.pending[key]
	if !ok && len(h.pending) >= maxCached {
		return // the key's next insert after a prune will note it
	}
	if n := len(ms); n > 0 {
		last := &ms[n-1]
		if fence <= last.fence {
			return // a later insert was noted, with a later due
		}
		if due.Sub(last.opened) < housekeepingTick || n >= maxMarks {
			last.fence = fence
			if due.After(last.due) {
				last.due = due
			}
			return
		}
	}
	h.pending[key] = append(ms, mark{fence: fence, due: due, opened: due})
}

// pruneJob is a key to prune below fence.
type pruneJob struct {
	key   string
	fence int64
}

// due returns the keys with a mark due at now, each with the highest
// such mark's fence, at most pruneKeysPerTick of them.
func (h *housekeeper) due(now time.Time) []pruneJob {
	var jobs []pruneJob
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, ms := range h.pending {
		i := 0
		for i < len(ms) && !now.Before(ms[i].due) {
			i++
		}
		if i == 0 {
			continue
		}
		jobs = append(jobs, pruneJob{k, ms[i-1].fence})
		if len(jobs) == pruneKeysPerTick {
			break
		}
	}
	return jobs
}

// pruned forgets key's marks up to fence, whose grants below are deleted.
func (h *housekeeper) pruned(key string, fence int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ms := h.pending[key]
	i := 0
	for i < len(ms) && ms[i].fence <= fence {
		i++
	}
	if i == len(ms) {
		delete(h.pending, key)
		return
	}
	h.pending[key] = slices.Delete(ms, 0, i)
}

// forget drops the housekeeper's pending work, after the work in progress
// has ended. Drop calls it before it deletes the collection, so that no
// head is raised and no grant pruned in a collection made again later.
// It returns at once if the housekeeper has stopped.
func (h *housekeeper) forget(ctx context.Context) error {
	ack := make(chan struct{})
	select {
	case h.forgets <- ack:
	case <-h.done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	select {
	case <-ack:
	case <-h.done:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	return nil
}

// dropPending empties the marks, the floors and the queued head updates.
// Only the housekeeper's goroutine calls it.
func (h *housekeeper) dropPending() {
	h.mu.Lock()
	clear(h.pending)
	h.mu.Unlock()
	clear(h.floors)
	for range len(h.heads) {
		<-h.heads
	}
}

// stop stops the housekeeper and waits for it. Pending work is dropped.
func (h *housekeeper) stop() {
	h.cancel()
	<-h.done
}

func (h *housekeeper) run(ctx context.Context) {
	defer close(h.done)
	t := time.NewTicker(housekeepingTick)
	defer t.Stop()
	// The connection measured the server's clock with one hello; measure
	// it properly now.
	rctx, cancel := context.WithTimeout(ctx, housekeepingTimeout)
	h.clock.measure(rctx, clockSamples) // on failure the first measurement stays
	cancel()
	for {
		select {
		case <-ctx.Done():
			return
		case u := <-h.heads:
			h.raiseHeads(ctx, u)
			continue
		case ack := <-h.forgets:
			h.dropPending()
			close(ack)
			continue
		case <-t.C:
		}
		if h.clock.age() >= clockRefresh {
			rctx, cancel := context.WithTimeout(ctx, housekeepingTimeout)
			h.clock.measure(rctx, clockSamples) // on failure the old measurement stays, its slack growing
			cancel()
		}
		h.sweep(time.Now())
		h.pruneDue(ctx)
	}
}

// raiseHeads raises the head documents for u and for the updates queued
// behind it, once per key, to the highest fence asked for it: a busy key
// queues an update every headEvery fences, and each costs FerretDB a
// write. Best effort: the head is a hint.
func (h *housekeeper) raiseHeads(ctx context.Context, u headUpdate) {
	top := map[string]int64{u.key: u.fence}
	for range len(h.heads) {
		v := <-h.heads
		top[v.key] = max(top[v.key], v.fence)
	}
	for k, f := range top {
		if ctx.Err() != nil {
			return
		}
		h.raiseHead(ctx, k, f)
	}
}

// raiseHead raises key's head document to at least fence, creating it if
// need be.
func (h *housekeeper) raiseHead(ctx context.Context, key string, fence int64) error {
	return h.maxHead(ctx, key, "fence", fence)
}

// maxHead raises field of key's head document to at least v, creating
// the document if need be.
func (h *housekeeper) maxHead(ctx context.Context, key, field string, v int64) error {
	ctx, cancel := context.WithTimeout(ctx, housekeepingTimeout)
	defer cancel()
	var err error
	for range 2 { // two upserts of a missing document race: the loser updates
		_, err = h.coll.UpdateOne(ctx,
			bson.D{{Key: "_id", Value: headID(key)}},
			bson.D{{Key: "$max", Value: bson.D{{Key: field, Value: v}}}},
			options.UpdateOne().SetUpsert(true))
		if !mongo.IsDuplicateKeyError(err) {
			break
		}
	}
	return err
}

// pruneDue deletes the superseded grants of keys whose marks are due,
// for at most half a tick, and what it did not get to at the next tick.
func (h *housekeeper) pruneDue(ctx context.Context) {
	now := time.Now()
	stop := now.Add(housekeepingTick / 2)
	for _, j := range h.due(now) {
		if ctx.Err() != nil || time.Now().After(stop) {
			return
		}
		done, err := h.pruneKey(ctx, j.key, j.fence, stop)
		if err == nil && done {
			h.pruned(j.key, j.fence)
		}
	}
}

// pruneKey deletes key's grants below fence, in ascending order, starting
// above what is known to be deleted already, one ordered delete of up to
// pruneBatch grants after another until it gets to fence or stop passes.
// It reports whether it got to fence.
func (h *housekeeper) pruneKey(ctx context.Context, key string, fence int64, stop time.Time) (bool, error) {
	// First the head must exist and show fence: from now on a discovery
	// that finds it absent knows that nothing was deleted yet.
	if err := h.raiseHead(ctx, key, fence); err != nil {
		return false, err
	}
	rctx, cancel := context.WithTimeout(ctx, housekeepingTimeout)
	var hd head
	err := h.coll.FindOne(rctx, bson.D{{Key: "_id", Value: headID(key)}}).Decode(&hd)
	cancel()
	if err != nil {
		return false, err
	}
	from := max(hd.Pruned, h.floors[key], 1)
	if from >= fence {
		return true, nil
	}
	to := from // [from, to) is deleted
	models := make([]mongo.WriteModel, 0, min(fence-from, pruneBatch))
	for to < fence {
		end := min(fence, to+pruneBatch)
		models = models[:0]
		for f := to; f < end; f++ {
			models = append(models, mongo.NewDeleteOneModel().SetFilter(bson.D{{Key: "_id", Value: grantID(key, f)}}))
		}
		dctx, cancel := context.WithTimeout(ctx, housekeepingTimeout)
		_, err = h.coll.BulkWrite(dctx, models, options.BulkWrite().SetOrdered(true))
		cancel()
		if err != nil {
			break
		}
		to = end
		if time.Now().After(stop) {
			break
		}
	}
	if to == from {
		return false, err
	}
	if len(h.floors) >= maxCached {
		clear(h.floors)
	}
	h.floors[key] = to
	// Raised once, after every deletion it reports: it never says more
	// than the truth.
	if err := h.maxHead(ctx, key, "pruned", to); err != nil {
		return false, err
	}
	return to == fence, err
}
