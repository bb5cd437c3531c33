package lock

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/fencing"
)

// An Election elects one leader among the candidates that campaign under
// one name, on any driver. A term is one candidate's lead. It is a lock
// on the election's key, kept alive until its leader resigns or loses it.
// So an election keeps the lock's promises. Two terms never overlap on the
// client's clock, and a term's [Term.Done] closes no later than its
// validity. Where the driver issues fencing tokens, each term's token is
// greater than every earlier term's. Pass it to the resource the leader
// writes to, so that the resource refuses a deposed leader's writes (see
// package fencing). Without tokens (Redlock without fencing), a term has
// no token, and only the validity on the leader's own clock separates
// terms.
//
// The leader's value, a host and port say, is readable by everyone with
// [Election.Leader] and [Election.Observe]. It travels in the term's lock
// value, after the random part, so one read of the key gives the value
// and the token together. A reader never pairs one term's value with
// another's token. The price is a limit of [MaxLeaderValue] bytes.
//
// An Election is safe for concurrent use. It holds no state of its own
// beyond its name and options, so any number of them may exist.
type Election struct {
	c    *Client
	name string
	key  string
	o    options
}

// MaxLeaderValue is the longest leader value [Election.Campaign] accepts,
// in bytes: 123, enough for a DNS name of a pod with its port, or an IPv6
// address with its port. A lock value holds [driver.MaxValueLen] (192)
// characters, of which the random part takes 27. The remaining 165 carry
// 123 bytes in unpadded base64, at 6 bits a character.
const MaxLeaderValue = (driver.MaxValueLen - randomLen) * 6 / 8

// electionKey is the key the terms of the election name hold. The ASCII
// unit separator (0x1f), which user keys are unlikely to use, sets the
// name apart from the kind of primitive and the key's part in it.
func electionKey(name string) string { return name + "\x1felection\x1fleader" }

// Election returns the election called name. Its terms are held with opts
// over the client's defaults. [WithTTL] sets how long a vanished leader
// keeps the lead, and so the failover time after a crash. [WithRetry] sets
// how often a candidate tries while another leads. A candidate wakes at
// once on a release where the driver announces releases. name follows the
// rules of keys, and is at most 496 bytes long.
func (c *Client) Election(name string, opts ...Option) (*Election, error) {
	if err := checkKey(name); err != nil {
		return nil, opError("election", name, err)
	}
	key := electionKey(name)
	o, err := apply(key, c.defaults, opts)
	if err != nil {
		return nil, opError("election", name, err)
	}
	return &Election{c: c, name: name, key: key, o: o}, nil
}

// Name returns the election's name.
func (e *Election) Name() string { return e.name }

// Key returns the backend key that the election's terms hold. It is for
// tools that inspect the backend.
func (e *Election) Key() string { return e.key }

// Campaign waits until the candidate is elected, and returns its term.
// value is what [Election.Leader] reports for the term, at most
// [MaxLeaderValue] bytes. Campaign waits as [Client.Acquire] does. It
// gives up when ctx ends, when the retry strategy gives up (the default
// never does), or on a failure that retrying cannot fix. The term keeps
// itself alive until [Term.Resign], or until it is lost.
func (e *Election) Campaign(ctx context.Context, value string) (*Term, error) {
	o, err := e.withValue(value)
	if err != nil {
		return nil, opError("campaign", e.name, err)
	}
	l, err := e.c.acquireTraced(ctx, e.key, &o)
	if err != nil {
		return nil, err
	}
	return newTerm(e, l, value), nil
}

// TryCampaign makes one attempt to be elected. If another candidate
// leads, the error matches [ErrNotAcquired].
func (e *Election) TryCampaign(ctx context.Context, value string) (*Term, error) {
	o, err := e.withValue(value)
	if err != nil {
		return nil, opError("campaign", e.name, err)
	}
	l, err := e.c.TryAcquire(ctx, e.key, func(to *options) { *to = o })
	if err != nil {
		return nil, err
	}
	return newTerm(e, l, value), nil
}

// withValue returns the election's options for a term with value.
func (e *Election) withValue(value string) (options, error) {
	if len(value) > MaxLeaderValue {
		return options{}, fmt.Errorf("%w: leader value of %d bytes, over the maximum of %d", ErrInvalidOption, len(value), MaxLeaderValue)
	}
	o := e.o
	o.tag = base64.RawURLEncoding.EncodeToString([]byte(value))
	return o, nil
}

// Lead campaigns as [Election.Campaign] does, runs fn once elected, and
// resigns when fn returns. fn's context is cancelled the moment the term
// ends, with a cause matching [ErrLost] or [ErrClosed], as [Client.Do]'s
// is. It carries the term's lock (see [FromContext]). Lead returns fn's
// error. If the term ended while fn ran, the error matches ErrLost or
// ErrClosed too. That is client-go's OnStartedLeading and
// OnStoppedLeading, with ReleaseOnCancel always on.
func (e *Election) Lead(ctx context.Context, value string, fn func(context.Context) error) (err error) {
	if fn == nil {
		return opError("lead", e.name, fmt.Errorf("%w: nil function", ErrInvalidOption))
	}
	t, err := e.Campaign(ctx, value)
	if err != nil {
		return err
	}
	fctx, cancel := context.WithCancelCause(context.WithValue(ctx, lockKey{}, t.l))
	defer cancel(nil)
	t.l.whenDone(func() {
		cause := t.l.Err()
		if !errors.Is(cause, ErrClosed) && !errors.Is(cause, ErrLost) {
			cause = fmt.Errorf("%w: %w before the function returned", ErrLost, cause)
		}
		cancel(cause)
	})
	defer func() {
		ended := context.Cause(fctx)
		if !errors.Is(ended, ErrLost) && !errors.Is(ended, ErrClosed) {
			ended = nil
		}
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer rcancel()
		if rerr := t.Resign(rctx); rerr != nil && ended == nil {
			e.c.warn(ctx, "lock: resign after Lead failed; the lead stays taken until its TTL runs out", "election", e.name, "err", rerr)
		}
		if ended != nil {
			err = opError("lead", e.name, errors.Join(ended, err))
		}
	}()
	return fn(fctx)
}

// Term is one candidate's lead in an [Election], from its election to its
// end. It is a [Lock] on the election's key, which the term keeps alive
// itself. Do not call [Lock.KeepAlive] or [Lock.Release] on it: resign
// instead. A Term is safe for concurrent use.
type Term struct {
	l     *Lock
	value string

	once sync.Once
	stop func() // stops the keeper
}

func newTerm(e *Election, l *Lock, value string) *Term {
	t := &Term{l: l, value: value}
	t.stop = l.keepAlive(context.Background(), nil)
	return t
}

// Lock returns the term's lock, for its validity and for code that takes
// a *Lock.
func (t *Term) Lock() *Lock { return t.l }

// Value returns the value the leader campaigned with.
func (t *Term) Value() string { return t.value }

// Token returns the term's fencing token, and false if the driver does
// not issue tokens. Each term's token is greater than every earlier
// term's.
func (t *Term) Token() (fencing.Token, bool) { return t.l.Token() }

// Done returns a channel that is closed when the term ends. It ends when
// the leader resigns, when an extension is refused, when its validity
// runs out, or when the client is closed. Done closes no later than
// [Term.ValidUntil]. The leader must stop acting as leader then.
func (t *Term) Done() <-chan struct{} { return t.l.Done() }

// Err returns nil while the term lasts, and why it ended after Done is
// closed, as [Lock.Err] does.
func (t *Term) Err() error { return t.l.Err() }

// ValidUntil returns the instant, on this process's monotonic clock, up
// to which the term surely lasts. Each extension moves it forward.
func (t *Term) ValidUntil() time.Time { return t.l.ValidUntil() }

// Resign ends the term and frees the lead, so that another candidate is
// elected at once. If the term had ended already, the error matches
// [ErrNotHeld]. Any other error is the backend's. The term has ended
// then all the same, and the lead frees itself at the end of the TTL.
func (t *Term) Resign(ctx context.Context) error {
	t.once.Do(t.stop)
	if err := t.l.Release(ctx); err != nil {
		t.l.mu.Lock()
		if !t.l.state.Load().ended() {
			t.l.expire(time.Now(), errResigned)
		}
		t.l.mu.Unlock()
		return err
	}
	return nil
}

// errResigned is why a term whose resignation failed ended.
var errResigned = errors.New("resigned, but the release failed")

// String describes the term by its election's key and its token.
func (t *Term) String() string { return "lock.Term(" + t.l.String() + ")" }

// Leader describes the leader of an election, as [Election.Leader]
// reports it.
type Leader struct {
	// Value is the value the leader campaigned with.
	Value string

	// ID identifies the term, as [Lock.ID] does for the term's lock.
	ID string

	// Token is the term's fencing token, if Fenced.
	Token  fencing.Token
	Fenced bool

	// TTL is the time left on the term's lease, by the backend's clock.
	TTL time.Duration
}

// Leader reports who leads, and false if nobody does. One read of the
// backend gives the value and the token, so they belong to one term. On
// Redlock with fencing, a term's token is written just after its lock.
// For that moment, the new leader shows with the previous term's token,
// never with a greater one. On a driver that cannot tell who holds a key
// (one without driver.Inspector), the error matches
// [errors.ErrUnsupported].
func (e *Election) Leader(ctx context.Context) (Leader, bool, error) {
	cn, err := e.c.ready(ctx)
	if err != nil {
		return Leader{}, false, opError("leader", e.name, err)
	}
	if cn.inspector == nil {
		return Leader{}, false, opError("leader", e.name, fmt.Errorf("driver %T cannot tell who holds a key: %w", cn.Conn, errors.ErrUnsupported))
	}
	if !e.c.enter() {
		return Leader{}, false, opError("leader", e.name, ErrClosed)
	}
	defer e.c.leave()
	h, held, err := cn.inspector.Inspect(ctx, e.key)
	if err != nil || !held {
		if err != nil {
			err = opError("leader", e.name, err)
		}
		return Leader{}, false, err
	}
	ld := Leader{Token: fencing.Token(h.Lease.Token), Fenced: h.Lease.Fenced, TTL: h.TTL}
	ld.ID, ld.Value = splitValue(h.Value)
	return ld, true, nil
}

// splitValue returns the ID and the leader value that a term's lock value
// v carries. A value that is not a term's gives an empty leader value.
func splitValue(v string) (id, value string) {
	id = v[:min(len(v), idLen)]
	tag := valueTag(v)
	if tag == "" {
		return id, ""
	}
	b, err := base64.RawURLEncoding.DecodeString(tag)
	if err != nil {
		return id, ""
	}
	return id, string(b)
}

// Observe reports the election's leaders as they change, on a channel
// that is closed when ctx ends or the client is closed. It sends the
// leader at once if there is one, then each new leader it sees. A leader
// is new if its token is greater than the last one sent, or, without
// tokens, if its ID differs; the last one sent is sent again once its
// token shows, if it was read without one (on Redlock with fencing, for a
// moment after the lock is taken). So the tokens it sends increase, and a
// reader that lags never goes back to an earlier term. Observe reads the
// backend each fifth of the TTL (between 10ms and 1s). Where the driver
// announces releases, it also reads at once after a release, and then
// often until the next leader shows. A term shorter than that pace may go
// unseen. A vacant lead is not sent. Read errors are retried at the same
// pace. On a driver that cannot tell who holds a key (one without
// driver.Inspector), the channel is closed at once.
func (e *Election) Observe(ctx context.Context) <-chan Leader {
	ch := make(chan Leader)
	go e.observe(ctx, ch)
	return ch
}

// observePace returns how often Observe reads the backend with no news.
func (e *Election) observePace() time.Duration {
	return min(max(e.o.ttl/5, 10*time.Millisecond), time.Second)
}

// observe is Observe's goroutine.
func (e *Election) observe(ctx context.Context, ch chan<- Leader) {
	defer close(ch)
	var released <-chan struct{}
	if cn, err := e.c.ready(ctx); err == nil && cn.waiter != nil {
		if w, err := cn.waiter.Watch(ctx, e.key); err == nil {
			defer func() { go w.Close() }()
			released = w.Released()
		}
	}
	pace := e.observePace()
	soon := pace // the next wait; shorter after a release
	var last Leader
	sent := false
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.c.closing:
			return
		case <-released:
			soon = time.Millisecond
			t.Reset(0)
			continue
		case <-t.C:
		}
		ld, held, err := e.Leader(ctx)
		switch {
		case err != nil && (errors.Is(err, ErrClosed) || errors.Is(err, errors.ErrUnsupported)):
			return
		case held && (!sent || laterTerm(ld, last)):
			select {
			case ch <- ld:
			case <-ctx.Done():
				return
			}
			last, sent, soon = ld, true, pace
		case soon < pace:
			soon = min(soon*2, pace) // a release came: look often for the next leader
		}
		t.Reset(soon)
	}
}

// laterTerm reports whether ld is a later term than last, or last's own
// term showing the token it was sent without.
func laterTerm(ld, last Leader) bool {
	switch {
	case ld.Fenced && last.Fenced:
		return ld.Token > last.Token
	case ld.ID == last.ID:
		// The same term, whose token showed after it was sent without
		// one (on Redlock the token is written just after the lock).
		return ld.Fenced
	}
	return true
}
