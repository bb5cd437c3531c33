package etcd

import (
	"context"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// lease is a lease the cluster granted, as this process knows it.
type lease struct {
	id clientv3.LeaseID
	// ends is the earliest instant, on this process's monotonic clock, at
	// which the cluster may end the lease: the clock reading taken before
	// the grant was sent, plus the TTL granted. The cluster's leader starts
	// the lease's TTL when it applies the grant, which is later, and a new
	// leader extends every lease, so the lease lasts at least until ends.
	ends time.Time
}

// serves reports whether a key put under l at any instant from now on is
// kept by the cluster for at least ttl after now.
func (l lease) serves(now time.Time, ttl time.Duration) bool {
	return l.id != clientv3.NoLease && !now.Add(ttl).After(l.ends)
}

// window is how much longer than a TTL the leases that serve it are
// granted for: each lease serves acquisitions for that long after its
// grant, and keeps a key that long past its TTL at most (plus the
// rounding up to whole seconds, etcd's unit). A tenth of the TTL, within
// [1s, 1min].
func window(ttl time.Duration) time.Duration {
	return min(max(ttl/10, time.Second), time.Minute)
}

// leaseSeconds is the TTL, in seconds, of the leases that serve ttl.
func leaseSeconds(ttl time.Duration) int64 {
	return int64((ttl + window(ttl) + time.Second - 1) / time.Second)
}

// leasePool grants leases ahead of need and shares them: one current lease
// per lease TTL (see leaseSeconds), which every acquisition and extension
// whose TTL it serves puts its key under, and the next one granted in the
// background before the current one stops serving. So a steady stream of
// acquisitions never waits for a grant; the first with a TTL, or the first
// after a pause longer than the window, waits for one.
type leasePool struct {
	grant func(ctx context.Context, seconds int64) (lease, error)
	ctx   context.Context // ends at close; bounds the background grants
	stop  context.CancelFunc
	wg    sync.WaitGroup

	mu      sync.Mutex
	classes map[int64]*leaseClass
}

// leaseClass is the pool's state for one lease TTL.
type leaseClass struct {
	cur     lease
	pending *grantCall // the grant in flight, if any
}

// grantCall is a grant in flight; done is closed when it ends.
type grantCall struct {
	done chan struct{}
	l    lease
	err  error
}

func newLeasePool(grant func(context.Context, int64) (lease, error)) *leasePool {
	ctx, stop := context.WithCancel(context.Background())
	return &leasePool{grant: grant, ctx: ctx, stop: stop, classes: make(map[int64]*leaseClass)}
}

// get returns a lease that serves ttl from now: the current one of its
// class, or, if that no longer serves it, the one being granted (granting
// it if need be). It starts the next grant in the background once the
// current lease has less than half the window left to serve ttl.
func (p *leasePool) get(ctx context.Context, ttl time.Duration) (lease, error) {
	secs := leaseSeconds(ttl)
	for {
		now := time.Now()
		p.mu.Lock()
		if p.ctx.Err() != nil {
			p.mu.Unlock()
			return lease{}, errClosed
		}
		c := p.classes[secs]
		if c == nil {
			c = &leaseClass{}
			p.classes[secs] = c
		}
		if c.cur.serves(now, ttl) {
			if c.pending == nil && !c.cur.serves(now.Add(window(ttl)/2), ttl) {
				p.start(c, secs)
			}
			l := c.cur
			p.mu.Unlock()
			return l, nil
		}
		call := c.pending
		if call == nil {
			call = p.start(c, secs)
		}
		p.mu.Unlock()
		select {
		case <-call.done:
		case <-ctx.Done():
			return lease{}, ctx.Err()
		}
		if call.err != nil {
			return lease{}, call.err
		}
		if call.l.serves(time.Now(), ttl) {
			return call.l, nil
		}
		// Granted too slowly to serve ttl any more: try again.
	}
}

// start starts a grant for class c. p.mu must be held.
func (p *leasePool) start(c *leaseClass, secs int64) *grantCall {
	call := &grantCall{done: make(chan struct{})}
	c.pending = call
	p.wg.Go(func() {
		call.l, call.err = p.grant(p.ctx, secs)
		p.mu.Lock()
		if call.err == nil && call.l.ends.After(c.cur.ends) {
			c.cur = call.l
		}
		c.pending = nil
		p.mu.Unlock()
		close(call.done)
	})
	return call
}

// drop forgets l, which the cluster no longer has, so that the next
// acquisition gets another.
func (p *leasePool) drop(l lease) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.classes {
		if c.cur.id == l.id {
			c.cur = lease{}
		}
	}
}

// close stops the pool and waits for the grants in flight. The leases
// granted expire by their TTL.
func (p *leasePool) close() {
	p.mu.Lock()
	p.stop()
	p.mu.Unlock()
	p.wg.Wait()
}
