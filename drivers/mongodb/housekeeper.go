package mongodb

import (
	"context"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

const (
	// housekeepingTick is how often the housekeeper looks for work.
	housekeepingTick = 2 * time.Second
	// housekeepingTimeout bounds each of its requests.
	housekeepingTimeout = 10 * time.Second
	// pruneBatch is how many keys one delete covers at most.
	pruneBatch = 100
	// maxPending bounds the keys waiting to be pruned. Keys beyond it are
	// pruned after their next acquisition instead.
	maxPending = 100_000
)

// superseded is a key whose grants below fence may be deleted once the
// server's clock has passed created + insertGrace.
type superseded struct {
	fence   int64
	created bson.DateTime
}

// housekeeper is a connection's background goroutine: it measures the
// server's clock again every clockRefresh and deletes superseded grants
// (see Housekeeping in the package documentation).
type housekeeper struct {
	coll  *mongo.Collection
	clock *serverClock
	prune bool

	mu      sync.Mutex
	pending map[string]superseded

	cancel context.CancelFunc
	done   chan struct{}
}

func startHousekeeper(coll *mongo.Collection, clock *serverClock, prune bool) *housekeeper {
	ctx, cancel := context.WithCancel(context.Background())
	h := &housekeeper{
		coll:    coll,
		clock:   clock,
		prune:   prune,
		pending: make(map[string]superseded),
		cancel:  cancel,
		done:    make(chan struct{}),
	}
	go h.run(ctx)
	return h
}

// supersede notes that key's grant fence, created at created (by the
// server's clock, at the latest), superseded the grants below it. A key
// already waiting keeps its older entry, so that a busy key is pruned at
// least every insertGrace.
func (h *housekeeper) supersede(key string, fence int64, created bson.DateTime) {
	if !h.prune {
		return
	}
	h.mu.Lock()
	if _, ok := h.pending[key]; !ok && len(h.pending) < maxPending {
		h.pending[key] = superseded{fence: fence, created: created}
	}
	h.mu.Unlock()
}

// stop stops the housekeeper and waits for it. Pending deletions are
// dropped.
func (h *housekeeper) stop() {
	h.cancel()
	<-h.done
}

func (h *housekeeper) run(ctx context.Context) {
	defer close(h.done)
	t := time.NewTicker(housekeepingTick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if h.clock.age() >= clockRefresh {
			rctx, cancel := context.WithTimeout(ctx, housekeepingTimeout)
			h.clock.measure(rctx) // on failure the old measurement stays, its slack growing
			cancel()
		}
		h.pruneDue(ctx)
	}
}

// pruneDue deletes the superseded grants whose successors are old enough.
func (h *housekeeper) pruneDue(ctx context.Context) {
	lo, _ := h.clock.bounds(time.Now())
	due := floorMillis(lo.Add(-insertGrace))
	var batch bson.A
	var keys []string
	h.mu.Lock()
	for k, s := range h.pending {
		if s.created > due {
			continue
		}
		batch = append(batch, bson.D{{Key: "key", Value: k}, {Key: "fence", Value: bson.D{{Key: "$lt", Value: s.fence}}}})
		keys = append(keys, k)
		if len(batch) == pruneBatch {
			break
		}
	}
	h.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	dctx, cancel := context.WithTimeout(ctx, housekeepingTimeout)
	_, err := h.coll.DeleteMany(dctx, bson.D{{Key: "$or", Value: batch}})
	cancel()
	if err != nil {
		return // try again at the next tick
	}
	h.mu.Lock()
	for _, k := range keys {
		delete(h.pending, k)
	}
	h.mu.Unlock()
}
