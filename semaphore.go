package lock

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/fencing"
)

// MaxPermits is the largest size of a [Semaphore]. Each new permit reads
// the other slots once, so the cost of a grant grows with the size.
const MaxPermits = 64

// ErrSizeMismatch means a semaphore's permit was refused because another
// holder of the same name asked for a different number of permits. A
// waiting [Semaphore.Acquire] ends with it at once.
var ErrSizeMismatch = errors.New("semaphore is held with another size")

// A Semaphore lets at most N holders of a name in at once, on any
// driver. It is returned by [Client.Semaphore]. A Semaphore is safe for
// concurrent use. Its size and options never change.
//
// # Permits
//
// A semaphore of N is N slot keys on the backend. A permit is the
// [*Lock] of one free slot, so [Lock.KeepAlive], [Lock.Done],
// [Lock.Extend], [Lock.Release] and [FromContext] (inside
// [Semaphore.Do]) work on it as on any lock, each permit with its own
// validity. A permit's [Lock.Key] is its slot's key: the name, the
// separator "\x1f", "sem", the separator, and the slot's index. Do not
// use such keys for locks of your own.
//
// # Tokens
//
// A permit's token is its slot's token. It orders the grants of that slot,
// not of the semaphore. A guard given permits' tokens must keep one
// newest token per slot: pass [Lock.Key] as the resource's name. A token
// is then stale when a later grant of the same slot was admitted, which
// means that its permit has ended. Tokens of different slots are
// unrelated. On a driver without tokens (Redlock without fencing=true,
// say), a permit has none, and the promise rests on its validity alone.
//
// # The size
//
// The size is stored in the backend with each permit: a permit's value
// carries N after its random part. After a grant, the new holder reads
// the other slots of its size, and gives the permit back with an error
// matching [ErrSizeMismatch] if one is held with another size. So a
// semaphore's size is that of its holders, from its first permit to its
// last. Changing the size while permits are held is refused this way.
// Once every permit has ended, any size may be used.
//
// Holders that agree on the size are at most N at any instant, on every
// driver. Holders of different sizes never both hold slots below the
// smaller size: of two such grants, the later one sees the earlier
// holder and is refused. A grant above the smaller size is invisible to
// the smaller semaphore, which does not read those slots. If a
// semaphore of 5 holds slots 3 and 4, a semaphore of 3 may fill slots 0
// to 2 beside them, until the larger one's holders end. So holders of
// mixed sizes are at most the largest size, not the smallest. A strict
// bound would need one record of the size that lives as long as every
// permit, which a plain lock backend cannot keep without an extension of
// that record at every permit's extension. Give every client of a name
// the same size.
//
// # Waiting
//
// Calls of one client waiting for permits of one name queue in arrival
// order. Only the first in line tries the slots and listens for their
// releases; it wakes at a release on drivers that announce them, and
// polls at the retry strategy's pace too.
type Semaphore struct {
	c    *Client
	name string
	n    int
	keys []string // the slots' keys
	opts []Option // the semaphore's defaults, after the client's
}

// semSep separates a semaphore's name from the rest of its slots' keys.
// Keys may hold any byte but NUL, and users rarely write a unit separator.
const semSep = "\x1f"

// slotKey returns the key of slot i of the semaphore named name.
func slotKey(name string, i int) string {
	return name + semSep + "sem" + semSep + strconv.Itoa(i)
}

// permitTag is the tag of a permit's value (see newValue): "n" and the
// semaphore's size in decimal.
func permitTag(n int) string { return "n" + strconv.Itoa(n) }

// permitSize returns the size that a permit's value carries, and false
// if value is no permit's.
func permitSize(value string) (int, bool) {
	tag := valueTag(value)
	if len(tag) < 2 || tag[0] != 'n' {
		return 0, false
	}
	n, err := strconv.Atoi(tag[1:])
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// Semaphore returns the semaphore of n permits named name. It checks its
// arguments and contacts no backend. n must be within [1, [MaxPermits]].
// opts are the semaphore's defaults for its permits, which each call's
// own options override. name must leave room for the slots' keys within
// [MaxKeyLen]. Every client of one name should use the same n (see
// [Semaphore] for what happens when they do not).
func (c *Client) Semaphore(name string, n int, opts ...Option) (*Semaphore, error) {
	if n < 1 || n > MaxPermits {
		return nil, opError("semaphore", name, fmt.Errorf("%w: size %d is outside [1, %d]", ErrInvalidOption, n, MaxPermits))
	}
	if name == "" {
		return nil, opError("semaphore", name, fmt.Errorf("%w: empty", ErrInvalidKey))
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = slotKey(name, i)
	}
	s := &Semaphore{c: c, name: name, n: n, keys: keys, opts: slices.Clone(opts)}
	if _, err := s.options(nil); err != nil {
		return nil, opError("semaphore", name, err)
	}
	return s, nil
}

// Name returns the semaphore's name.
func (s *Semaphore) Name() string { return s.name }

// Size returns the number of permits, N.
func (s *Semaphore) Size() int { return s.n }

// options builds the options of one call, and checks them with the
// longest slot key.
func (s *Semaphore) options(opts []Option) (options, error) {
	return apply(s.keys[s.n-1], s.c.defaults, slices.Concat(s.opts, opts))
}

// Acquire acquires a permit, waiting while all N are held. It waits as
// [Client.Acquire] does, and ends with the same errors, with two more. It
// ends at once with an error matching [ErrSizeMismatch] if a permit is
// held with another size, and with one matching [errors.ErrUnsupported]
// on a driver that cannot tell who holds a key (driver.Inspector). Calls
// of one client queue in arrival order, and only the first in line tries
// the backend.
func (s *Semaphore) Acquire(ctx context.Context, opts ...Option) (*Lock, error) {
	o, err := s.options(opts)
	if err != nil {
		return nil, opError("acquire", s.name, err)
	}
	ctx, t := s.c.trace(ctx, "acquire", s.name)
	l, attempts, err := s.acquire(ctx, &o)
	t.end(ctx, acquired(l, attempts, err))
	return l, err
}

// TryAcquire makes one attempt at each slot, in an order that starts at
// a random one, and returns the first permit granted. If all N are held,
// the error matches [ErrNotAcquired]. It does not queue behind the
// client's waiting calls.
func (s *Semaphore) TryAcquire(ctx context.Context, opts ...Option) (*Lock, error) {
	o, err := s.options(opts)
	if err != nil {
		return nil, opError("acquire", s.name, err)
	}
	ctx, t := s.c.trace(ctx, "acquire", s.name)
	cn, err := s.c.ready(ctx)
	var l *Lock
	if err != nil {
		err = opError("acquire", s.name, err)
	} else if l, err = s.attempt(ctx, cn, &o); err == nil {
		if err = s.c.handOut(l); err != nil {
			l = nil
		}
	}
	t.end(ctx, acquired(l, 1, err))
	return l, err
}

// Do acquires a permit as [Semaphore.Acquire] does, runs fn while holding
// it, and releases it when fn returns, as [Client.Do] does for a lock.
// fn's context carries the permit (see [FromContext]).
func (s *Semaphore) Do(ctx context.Context, fn func(context.Context) error, opts ...Option) error {
	if fn == nil {
		return opError("do", s.name, fmt.Errorf("%w: nil function", ErrInvalidOption))
	}
	o, err := s.options(opts)
	if err != nil {
		return opError("do", s.name, err)
	}
	ctx, t := s.c.trace(ctx, "do", s.name)
	l, _, err := s.acquire(ctx, &o)
	if err != nil {
		t.end(ctx, Event{Err: err})
		return err
	}
	return s.c.hold(ctx, s.name, l, t, fn)
}

// acquire acquires a permit with checked options, waiting in the
// client's line for the name. It also returns the number of attempts
// made, each of which tries every slot once.
func (s *Semaphore) acquire(ctx context.Context, o *options) (*Lock, int, error) {
	c := s.c
	cn, err := c.ready(ctx)
	if err != nil {
		return nil, 0, opError("acquire", s.name, err)
	}
	ln := c.lines.join(s.name)
	defer c.lines.leave(s.name, ln)
	select {
	case <-ln.turn:
	case <-ctx.Done():
		return nil, 0, gaveUp(ctx, s.name, ErrNotAcquired)
	case <-c.closing:
		return nil, 0, opError("acquire", s.name, ErrClosed)
	}
	defer func() { ln.turn <- struct{}{} }()
	var w *slotWatch // made at the first refusal
	defer func() { w.close() }()
	var down time.Time // when the current run of unreachable attempts began
	for attempts := 1; ; attempts++ {
		l, err := s.attempt(ctx, cn, o)
		if err == nil {
			if err = c.handOut(l); err == nil {
				return l, attempts, nil
			}
		}
		if !errors.Is(err, ErrUnavailable) {
			down = time.Time{}
		} else if down.IsZero() {
			down = time.Now()
		}
		switch {
		case errors.Is(err, ErrSizeMismatch), errors.Is(err, ErrMisconfigured),
			errors.Is(err, ErrClosed), errors.Is(err, errors.ErrUnsupported):
			return nil, attempts, err
		case ctx.Err() != nil:
			return nil, attempts, gaveUp(ctx, s.name, err)
		case !down.IsZero() && time.Since(down) >= MaxUnavailable:
			return nil, attempts, opError("acquire", s.name, fmt.Errorf("the backend was unreachable for %v: %w", MaxUnavailable, unwrapOp(err)))
		}
		d, again := o.retry.Delay(attempts)
		if !again {
			return nil, attempts, err
		}
		if w == nil && errors.Is(err, ErrNotAcquired) {
			// Try again at once once subscribed: a release before the
			// subscription would go unheard.
			w = s.watch(ctx, cn)
			continue
		}
		if perr := w.pause(ctx, d, c.closing); perr != nil {
			if errors.Is(perr, ErrClosed) {
				return nil, attempts, opError("acquire", s.name, ErrClosed)
			}
			return nil, attempts, gaveUp(ctx, s.name, err)
		}
	}
}

// attempt tries each slot once, from a random one on, and returns the
// first permit granted and admitted. If every slot was held, the error
// matches ErrNotAcquired. Otherwise it is the last other failure.
func (s *Semaphore) attempt(ctx context.Context, cn *conn, o *options) (*Lock, error) {
	if cn.inspector == nil {
		return nil, opError("acquire", s.name, fmt.Errorf("driver %T cannot tell who holds a key, which a semaphore needs: %w", cn.Conn, errors.ErrUnsupported))
	}
	po := *o
	po.tag = permitTag(s.n)
	first := rand.IntN(s.n)
	var failure error
	for k := range s.n {
		i := (first + k) % s.n
		l, err := s.c.attempt(ctx, cn, s.keys[i], &po, nil)
		switch {
		case err == nil:
			return s.admit(ctx, cn, l, i)
		case errors.Is(err, ErrNotAcquired):
		case errors.Is(err, ErrClosed), errors.Is(err, ErrMisconfigured), ctx.Err() != nil:
			return nil, err
		default:
			failure = err
		}
	}
	if failure != nil {
		return nil, failure
	}
	return nil, opError("acquire", s.name, ErrNotAcquired)
}

// admit returns l, the new permit of slot mine, once it has read the
// other slots and found none held with another size. Otherwise, or if a
// slot could not be read, it gives l back and says why.
func (s *Semaphore) admit(ctx context.Context, cn *conn, l *Lock, mine int) (*Lock, error) {
	sizes := make([]int, s.n) // of the other slots' holders; 0 for none
	errs := make([]error, s.n)
	if s.n > 1 {
		if !s.c.enter() {
			errs[mine] = ErrClosed
		} else {
			var wg sync.WaitGroup
			for i := range s.n {
				if i != mine {
					wg.Go(func() { sizes[i], errs[i] = s.holderSize(ctx, cn, i) })
				}
			}
			wg.Wait()
			s.c.leave()
		}
	}
	var err error
	for i, m := range sizes {
		if m != 0 && m != s.n {
			err = fmt.Errorf("%w: slot %d is held by a semaphore of %d, this one has %d", ErrSizeMismatch, i, m, s.n)
			break
		}
		if errs[i] != nil {
			err = classify(ctx, errs[i])
		}
	}
	if err == nil {
		return l, nil
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	l.Release(rctx)
	return nil, opError("acquire", s.name, err)
}

// holderSize returns the size carried by the value holding slot i, 0 if
// nobody holds it or its holder is no permit.
func (s *Semaphore) holderSize(ctx context.Context, cn *conn, i int) (int, error) {
	h, held, err := cn.inspector.Inspect(ctx, s.keys[i])
	if err != nil || !held {
		return 0, err
	}
	n, _ := permitSize(h.Value)
	return n, nil
}

// PermitHolder describes the holder of one slot of a semaphore, as
// [Semaphore.Holders] reports it.
type PermitHolder struct {
	Holder

	// Slot is the slot's index, from 0 to N-1.
	Slot int

	// Size is the number of permits its holder asked for, or 0 if the
	// slot's key is held by something other than a permit.
	Size int
}

// Holders reports the holders of the semaphore's slots, in slot order.
// On a driver that cannot tell who holds a key, the error matches
// [errors.ErrUnsupported].
func (s *Semaphore) Holders(ctx context.Context) ([]PermitHolder, error) {
	cn, err := s.c.ready(ctx)
	if err != nil {
		return nil, opError("inspect", s.name, err)
	}
	if cn.inspector == nil {
		return nil, opError("inspect", s.name, fmt.Errorf("driver %T cannot tell who holds a key: %w", cn.Conn, errors.ErrUnsupported))
	}
	if !s.c.enter() {
		return nil, opError("inspect", s.name, ErrClosed)
	}
	defer s.c.leave()
	var hs []PermitHolder
	for i, k := range s.keys {
		h, held, err := cn.inspector.Inspect(ctx, k)
		if err != nil {
			return nil, opError("inspect", k, err)
		}
		if !held {
			continue
		}
		n, _ := permitSize(h.Value)
		id := h.Value[:min(len(h.Value), idLen)]
		hs = append(hs, PermitHolder{Slot: i, Size: n, Holder: Holder{ID: id, TTL: h.TTL, Token: fencing.Token(h.Lease.Token), Fenced: h.Lease.Fenced}})
	}
	return hs, nil
}

// String describes the semaphore by its name and size.
func (s *Semaphore) String() string {
	return "lock.Semaphore(" + strconv.Quote(s.name) + ", " + strconv.Itoa(s.n) + ")"
}

// lines holds a client's lines of calls waiting for permits, by
// semaphore name. Its zero value has none.
type lines struct {
	mu sync.Mutex
	m  map[string]*line
}

// A line lets one call at a time, the holder of its turn, try a
// semaphore's slots. Go serves the callers blocked on a channel in
// arrival order, so the turn passes first come, first served.
type line struct {
	turn chan struct{} // holds the turn while no call does
	refs int           // calls in the line
}

// join adds a call to name's line, making the line if need be. Each join
// is undone by one leave.
func (ls *lines) join(name string) *line {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ln := ls.m[name]
	if ln == nil {
		if ls.m == nil {
			ls.m = make(map[string]*line)
		}
		ln = &line{turn: make(chan struct{}, 1)}
		ln.turn <- struct{}{}
		ls.m[name] = ln
	}
	ln.refs++
	return ln
}

// leave undoes one join.
func (ls *lines) leave(name string, ln *line) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ln.refs--; ln.refs == 0 {
		delete(ls.m, name)
	}
}

// A slotWatch wakes the first call in a semaphore's line when one of its
// slots may have been released: by the backend's announcement where the
// driver makes them, or by a Release of this client.
type slotWatch struct {
	qs      *queues
	keys    []string
	queues  []*queue // the client's queues of the slots, for its own releases
	watches []driver.Watch
	wake    chan struct{} // capacity one
	stop    chan struct{}
	wg      sync.WaitGroup
}

// watch subscribes to releases of every slot. A subscription that fails
// leaves that slot to the retry strategy's polls.
func (s *Semaphore) watch(ctx context.Context, cn *conn) *slotWatch {
	w := &slotWatch{qs: &s.c.waits, keys: s.keys, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	for _, k := range s.keys {
		q := w.qs.join(k)
		w.queues = append(w.queues, q)
		w.forward(q.released)
	}
	if cn.waiter == nil || !s.c.enter() {
		return w
	}
	defer s.c.leave()
	watches := make([]driver.Watch, len(s.keys))
	var wg sync.WaitGroup
	for i, k := range s.keys {
		wg.Go(func() {
			watch, err := cn.waiter.Watch(ctx, k)
			if err != nil {
				s.c.log().DebugContext(ctx, "lock: watch of a semaphore's slot failed", "key", k, "err", err)
				return
			}
			watches[i] = watch
		})
	}
	wg.Wait()
	for _, watch := range watches {
		if watch != nil {
			w.watches = append(w.watches, watch)
			w.forward(watch.Released())
		}
	}
	return w
}

// forward signals w.wake whenever ch receives, until w is closed.
func (w *slotWatch) forward(ch <-chan struct{}) {
	w.wg.Go(func() {
		for {
			select {
			case <-w.stop:
				return
			case <-ch:
				driver.Signal(w.wake)
			}
		}
	})
}

// pause waits for d, a release, ctx's end (its error) or the client's
// close (ErrClosed), whichever comes first. A nil w hears no releases.
func (w *slotWatch) pause(ctx context.Context, d time.Duration, closing <-chan struct{}) error {
	var wake <-chan struct{}
	if w != nil {
		wake = w.wake
	}
	t := time.NewTimer(max(d, 0))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-closing:
		return ErrClosed
	case <-t.C:
	case <-wake:
	}
	return nil
}

// close ends the subscriptions, closing the driver's watches in the
// background, as a waiting lock does. A nil w does nothing.
func (w *slotWatch) close() {
	if w == nil {
		return
	}
	close(w.stop)
	w.wg.Wait()
	for i, q := range w.queues {
		w.qs.leave(w.keys[i], q)
	}
	for _, watch := range w.watches {
		go watch.Close()
	}
}
