package mongodb

import (
	"context"
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
	// headEvery says which fences raise the head document: every
	// headEvery-th. Updates are FerretDB's most expensive requests (each
	// holds two SQLite connections and waits for the write lock), and a
	// head that lags is only a longer probe.
	headEvery = 16
	// headQueue is how many head updates may wait; more are dropped (the
	// head is a hint).
	headQueue = 1024
)

// superseded is a key whose grants below fence may be deleted from due
// on (the connection's monotonic clock), and the newest grant inserted
// since, whose turn comes next.
type superseded struct {
	fence, next  int64
	due, nextDue time.Time
}

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

	mu      sync.Mutex
	pending map[string]superseded
	floors  map[string]int64 // key -> every grant below it is deleted (only the housekeeper's goroutine uses it)

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
// deleted pruneDelay later. A key already waiting keeps its older entry,
// so that a busy key is pruned at least every pruneDelay, and remembers
// the newest for its next turn.
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
	if s, ok := h.pending[key]; ok {
		if fence > max(s.fence, s.next) {
			s.next, s.nextDue = fence, due
			h.pending[key] = s
		}
	} else if len(h.pending) < maxCached {
		h.pending[key] = superseded{fence: fence, due: due}
	}
	h.mu.Unlock()
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
			h.raiseHead(ctx, u.key, u.fence) // best effort: the head is a hint
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

// pruneDue deletes the superseded grants of keys whose successors are old
// enough.
func (h *housekeeper) pruneDue(ctx context.Context) {
	now := time.Now()
	var keys []string
	h.mu.Lock()
	for k, s := range h.pending {
		if now.Before(s.due) {
			continue
		}
		keys = append(keys, k)
		if len(keys) == pruneKeysPerTick {
			break
		}
	}
	h.mu.Unlock()
	for _, k := range keys {
		if ctx.Err() != nil {
			return
		}
		h.mu.Lock()
		s := h.pending[k]
		h.mu.Unlock()
		done, err := h.pruneKey(ctx, k, s.fence)
		if err != nil {
			continue // again at the next tick
		}
		if done {
			h.mu.Lock()
			if s := h.pending[k]; s.next > s.fence {
				h.pending[k] = superseded{fence: s.next, due: s.nextDue}
			} else {
				delete(h.pending, k)
			}
			h.mu.Unlock()
		}
	}
}

// pruneKey deletes key's grants below fence, in ascending order, starting
// above what is known to be deleted already. It reports whether it got to
// fence.
func (h *housekeeper) pruneKey(ctx context.Context, key string, fence int64) (bool, error) {
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
	to := min(fence, from+pruneBatch) // delete [from, to)
	models := make([]mongo.WriteModel, 0, to-from)
	for f := from; f < to; f++ {
		models = append(models, mongo.NewDeleteOneModel().SetFilter(bson.D{{Key: "_id", Value: grantID(key, f)}}))
	}
	dctx, cancel := context.WithTimeout(ctx, housekeepingTimeout)
	_, err = h.coll.BulkWrite(dctx, models, options.BulkWrite().SetOrdered(true))
	cancel()
	if err != nil {
		return false, err
	}
	if len(h.floors) >= maxCached {
		clear(h.floors)
	}
	h.floors[key] = to
	if err := h.maxHead(ctx, key, "pruned", to); err != nil {
		return false, err
	}
	return to == fence, nil
}
