package etcd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// avoidFor is how long a route that failed is passed over when another
// one is at hand.
const avoidFor = 5 * time.Second

// roundPause is the pause after a round in which every route failed, so
// that a cluster without a leader is not asked in a tight loop.
const roundPause = 25 * time.Millisecond

// route is one way to the cluster: a client of one member (a connector
// opened by DSN has one per member), or the caller's client (from New).
type route struct {
	name string                           // the member's endpoint, or "the client"
	open func() (*clientv3.Client, error) // nil if cli is the caller's

	mu      sync.Mutex
	cli     *clientv3.Client
	opening *opening // the making of cli under way, if any
	closed  bool

	avoidUntil atomic.Int64 // unix nanoseconds: it failed recently
}

// opening is the making of a route's client; done is closed when it ends.
type opening struct {
	done chan struct{}
	err  error
}

// client returns the route's client, making it on first use, or after a
// failed try (with user and password, making one authenticates, which
// waits for a member's answer). It waits for the making until ctx ends;
// the making goes on, and a later call finds its client.
func (r *route) client(ctx context.Context) (*clientv3.Client, error) {
	r.mu.Lock()
	switch {
	case r.closed:
		r.mu.Unlock()
		return nil, errClosed
	case r.cli != nil:
		defer r.mu.Unlock()
		return r.cli, nil
	}
	o := r.opening
	if o == nil {
		o = &opening{done: make(chan struct{})}
		r.opening = o
		go r.make(o)
	}
	r.mu.Unlock()
	select {
	case <-o.done:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	if o.err != nil {
		return nil, o.err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cli == nil {
		return nil, errClosed
	}
	return r.cli, nil
}

// make makes the route's client. A route closed meanwhile closes it.
func (r *route) make(o *opening) {
	c, err := r.open()
	r.mu.Lock()
	r.opening = nil
	switch {
	case err != nil:
		o.err = err
	case r.closed:
		o.err = errClosed
	default:
		r.cli = c
	}
	r.mu.Unlock()
	close(o.done)
	if err == nil && o.err != nil {
		c.Close()
	}
}

// close closes the route's client if it made one, and stops it: later
// requests through it fail with errClosed. A client being made is closed
// once made, without waiting for it.
func (r *route) close() error {
	r.mu.Lock()
	r.closed = true
	c := r.cli
	r.cli = nil
	r.mu.Unlock()
	if r.open == nil || c == nil {
		return nil
	}
	err := c.Close()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

func (r *route) avoided(now time.Time) bool { return r.avoidUntil.Load() > now.UnixNano() }

// routes sends each request to the route that answered last and, when it
// fails or does not answer within the member timeout, to the next one,
// until one answers or the request timeout runs out. A member that is
// down, hung or cut off from the leader thus costs one member timeout
// once, not a share of every request.
type routes struct {
	all           []*route
	pref          atomic.Int32 // the route that answered last
	members       bool         // a route per member (a connector opened by DSN)
	memberTimeout time.Duration
	reqTimeout    time.Duration
	leader        leaderSearch // with a route per member

	ctx  context.Context // ends at close: requests and searches under way end with it
	stop context.CancelFunc
}

func newRoutes(all []*route, members bool, cfg Config) *routes {
	rs := &routes{all: all, members: members, memberTimeout: cfg.MemberTimeout, reqTimeout: cfg.RequestTimeout}
	rs.ctx, rs.stop = context.WithCancel(context.Background())
	return rs
}

// errMemberTimeout marks an attempt that the member timeout cut short.
var errMemberTimeout = errors.New("no answer within the member timeout")

// errRequestTimeout marks a request that the request timeout ended.
var errRequestTimeout = errors.New("the cluster did not answer within the request timeout")

// errClosed is the failure of a request on a closed connection.
var errClosed = errors.New("connection closed")

// do runs op, one attempt per route in turn (see routes), and returns
// its first success or the error that ended the tries: one that trying
// elsewhere cannot mend, the last failure once the request timeout has
// run out, ctx's error, or errClosed. op may run again after an attempt
// that failed but took effect.
func (rs *routes) do(ctx context.Context, op func(ctx context.Context, c *clientv3.Client) error) error {
	rctx, cancel := context.WithTimeout(ctx, rs.reqTimeout)
	defer cancel()
	defer context.AfterFunc(rs.ctx, cancel)()
	start := int(rs.pref.Load())
	i := start
	var last error
	for n := 1; ; n++ {
		r := rs.all[i]
		err := rs.try(rctx, r, op)
		switch {
		case err == nil:
			// Only a request that moved on changes the preference, and
			// only if nothing else did meanwhile (a search for the
			// leader, another request that moved on).
			if i != start && rs.pref.CompareAndSwap(int32(start), int32(i)) {
				rs.movedOff()
			}
			return nil
		case ctx.Err() != nil:
			return fmt.Errorf("%w (last failure: %w)", context.Cause(ctx), cmpOr(last, err))
		case rs.ctx.Err() != nil:
			return errClosed
		case !transient(err):
			return err
		}
		last = err
		r.avoidUntil.Store(time.Now().Add(avoidFor).UnixNano())
		if rctx.Err() != nil {
			return fmt.Errorf("%w (%v): %w", errRequestTimeout, rs.reqTimeout, last)
		}
		i = rs.next(i)
		if n%len(rs.all) == 0 {
			pause(rctx, roundPause)
		}
	}
}

// try makes one attempt on r, under the member timeout, making r's
// client first if need be.
func (rs *routes) try(ctx context.Context, r *route, op func(context.Context, *clientv3.Client) error) error {
	actx, cancel := context.WithTimeout(ctx, rs.memberTimeout)
	defer cancel()
	c, err := r.client(actx)
	if err == nil {
		err = op(actx, c)
		if err == nil {
			return nil
		}
	} else if errors.Is(err, errClosed) {
		return err
	}
	switch {
	case actx.Err() != nil && ctx.Err() == nil:
		return fmt.Errorf("%s: %w (%v)", r.name, errMemberTimeout, rs.memberTimeout)
	case c == nil, transient(err):
		return fmt.Errorf("%s: %w", r.name, err)
	}
	return err
}

// next returns the route after i that has not failed recently, or simply
// the one after i if all have.
func (rs *routes) next(i int) int {
	n := len(rs.all)
	now := time.Now()
	for k := 1; k < n; k++ {
		if j := (i + k) % n; !rs.all[j].avoided(now) {
			return j
		}
	}
	return (i + 1) % n
}

// close ends the requests and searches under way, and closes the routes.
func (rs *routes) close() error {
	rs.stop()
	rs.stopSearching()
	var errs []error
	for _, r := range rs.all {
		errs = append(errs, r.close())
	}
	return errors.Join(errs...)
}

// transient reports whether err may go away on another member or a
// moment later: no leader (an election), a member down or hung, a request
// the cluster dropped or timed out.
func transient(err error) bool {
	if errors.Is(err, errMemberTimeout) {
		return true
	}
	code := status.Code(err)
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		code = ee.Code()
	}
	switch code {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Aborted, codes.Canceled:
		return true
	}
	return errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "proposal dropped")
}

func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
