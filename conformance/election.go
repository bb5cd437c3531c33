package conformance

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/fencing"
)

// electionCases are the cases of lock.Election. They are short: an
// election is a lock, and the lock's cases test the lock.
func (s *suite) electionCases() []testCase {
	return []testCase{
		{"Election_oneLeader", s.electionOneLeader},
		{"Election_tokensIncrease", s.electionTokensIncrease},
		{"Election_lostTermEndsByValidity", s.electionLostTerm},
		{"Election_resignHandsOver", s.electionResign},
		{"Election_observeSeesEachLeader", s.electionObserve},
	}
}

// election returns the election name on c, with the suite's TTL and
// opts, or fails the test.
func (s *suite) election(t *testing.T, c *lock.Client, name string, opts ...lock.Option) *lock.Election {
	t.Helper()
	opts = append([]lock.Option{lock.WithTTL(s.h.TTL)}, opts...)
	e, err := c.Election(name, opts...)
	if err != nil {
		t.Fatalf("Election(%q): %v", name, err)
	}
	return e
}

// electionOneLeader runs candidates on three clients, each campaigning
// for a few terms, and checks that no two terms overlap and that tokens
// grow. Each leader also checks that Leader reports it.
func (s *suite) electionOneLeader(t *testing.T) {
	ctx := s.ctxFor(t)
	name := key(t, "")
	const candidates, terms = 3, 5
	var h History
	var wg sync.WaitGroup
	errs := make(chan error, candidates)
	for i := range candidates {
		e := s.election(t, s.client(t), name, lock.WithRetry(lock.ExponentialBackoff(time.Millisecond, 20*time.Millisecond)))
		wg.Go(func() {
			for range terms {
				if err := oneTerm(ctx, e, "candidate-"+strconv.Itoa(i), &h); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("candidate: %v", err)
	}
	if err := h.Check(s.h.Fencing); err != nil {
		t.Error(err)
	}
	if want := candidates * terms; h.Len() != want && !t.Failed() {
		t.Errorf("%d terms recorded, want %d", h.Len(), want)
	}
}

// oneTerm campaigns on e, checks that Leader reports the term, records
// the term in h, and resigns.
func oneTerm(ctx context.Context, e *lock.Election, value string, h *History) error {
	term, err := e.Campaign(ctx, value)
	if err != nil {
		return err
	}
	got := time.Now()
	// A failed check resigns the term, so that the other candidates end
	// too rather than wait for the case's limit.
	fail := func(err error) error {
		term.Resign(ctx)
		return err
	}
	if !got.Before(term.ValidUntil()) {
		return fail(fmt.Errorf("campaign returned a term whose validity had passed %v before", got.Sub(term.ValidUntil())))
	}
	ld, ok, err := e.Leader(ctx)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		// The driver cannot tell who holds a key.
	case err != nil:
		return fail(fmt.Errorf("leader while leading: %w", err))
	case !ok || ld.ID != term.Lock().ID() || ld.Value != value:
		// A term ended early (lost) may show another leader: check that.
		if term.Err() == nil {
			return fail(fmt.Errorf("leader while leading = %+v, %v; want ID %s and value %s", ld, ok, term.Lock().ID(), value))
		}
	}
	h.Hold(term.Lock(), got)
	if err := term.Resign(ctx); err != nil && !errors.Is(err, lock.ErrNotHeld) {
		return err
	}
	return nil
}

// electionTokensIncrease checks that each term's token is greater than
// the last's, and that Leader reports it, as two clients take turns.
func (s *suite) electionTokensIncrease(t *testing.T) {
	if !s.h.Fencing {
		t.Skip("the driver issues no fencing tokens")
	}
	ctx := s.ctxFor(t)
	name := key(t, "")
	es := []*lock.Election{s.election(t, s.client(t), name), s.election(t, s.client(t), name)}
	var last fencing.Token
	for i := range 4 {
		term, err := es[i%2].Campaign(ctx, "v"+strconv.Itoa(i))
		if err != nil {
			t.Fatalf("Campaign of term %d: %v", i+1, err)
		}
		tok, ok := term.Token()
		if !ok || (i > 0 && tok <= last) {
			t.Errorf("term %d: token %v (fenced %v), want greater than the last term's %v", i+1, tok, ok, last)
		}
		// The token is written in the step that grants the term on most
		// drivers, and just after it on Redlock: allow a moment.
		var ld lock.Leader
		for end := time.Now().Add(s.h.TTL / 2); ; {
			ld, ok, err = es[(i+1)%2].Leader(ctx)
			if err != nil || (ok && ld.Token == tok) || time.Now().After(end) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		if errors.Is(err, errors.ErrUnsupported) {
			// The driver cannot tell who holds a key.
		} else if err != nil || !ok || ld.Token != tok || !ld.Fenced || ld.Value != "v"+strconv.Itoa(i) {
			t.Errorf("term %d: Leader = %+v, %v, %v; want token %v and value v%d", i+1, ld, ok, err, tok, i)
		}
		last = tok
		if err := term.Resign(ctx); err != nil {
			t.Fatalf("Resign of term %d: %v", i+1, err)
		}
	}
}

// electionLostTerm lets a term run out, as a leader's term does when its
// extensions stop reaching the backend. It checks that the term's Done
// closes no later than its validity, and that the next candidate is
// elected after it, within a TTL. On a driver that extends, the term's
// lease is first cut to lock.MinTTL, through the term's own lock.
func (s *suite) electionLostTerm(t *testing.T) {
	ctx := s.ctxFor(t)
	name := key(t, "")
	first, err := s.election(t, s.client(t), name).Campaign(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer first.Resign(ctx)
	other := s.election(t, s.client(t), name, lock.WithRetry(lock.FixedDelay(s.h.TTL/10)))
	elected := campaignAside(t, ctx, other)
	// A term whose lease never ends is caught within a bound of TTLs,
	// rather than at the case's limit.
	bound := max(10*s.h.TTL, 2*time.Second)
	bctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	if s.h.Extend {
		time.Sleep(s.h.TTL / 2) // the term outlives a first extension
		if err := first.Err(); err != nil {
			t.Fatalf("the term ended while kept alive: %v", err)
		}
		if err := cutShort(bctx, first.Lock(), s.h.TTL/4); err != nil && bctx.Err() == nil {
			t.Skipf("the driver cannot shorten a lease: %v", err)
		}
	}
	var ended time.Time
	select {
	case <-first.Done():
		ended = time.Now()
	case <-bctx.Done():
		t.Fatalf("the term's Done did not close within %v of its lease being cut short", bound)
	}
	if late := ended.Sub(first.ValidUntil()); late > s.h.TTL/2 {
		t.Errorf("the lost term's Done closed %v after its validity", late)
	}
	if err := first.Err(); !errors.Is(err, lock.ErrLost) {
		t.Errorf("Err of the lost term = %v, want an error matching ErrLost", err)
	}
	at, ok := electedWithin(t, elected, time.Until(first.ValidUntil())+4*s.h.TTL+time.Second,
		"no other candidate was elected within 4 TTLs of the lost term's validity: the lead stayed taken past its TTL")
	if !ok {
		return
	}
	switch {
	case at.Before(first.ValidUntil()):
		t.Errorf("the next term began %v before the lost term's validity ended", first.ValidUntil().Sub(at))
	case at.Sub(first.ValidUntil()) > 4*s.h.TTL:
		t.Errorf("the next term began %v after the lost term's validity ended: the lead stayed taken past its TTL", at.Sub(first.ValidUntil()))
	}
}

// cutShort shortens l's lease to lock.MinTTL, or to longer if the driver
// refuses that (ZooKeeper's session timeouts have a floor), and again if
// l's keeper extended it meanwhile, until l ends. It returns the driver's
// error if it refused both.
func cutShort(ctx context.Context, l *lock.Lock, longer time.Duration) error {
	ttl := lock.MinTTL
	for {
		err := l.Extend(ctx, ttl)
		switch {
		case err != nil && ttl < longer && !errors.Is(err, lock.ErrNotHeld):
			ttl = longer
			continue
		case errors.Is(err, lock.ErrNotHeld):
			return nil // the lease ran out first
		case err != nil:
			return err
		}
		until := l.ValidUntil()
		select {
		case <-l.Done():
			return nil
		case <-time.After(time.Until(until) + lock.MinTTL):
		}
		if !l.ValidUntil().After(until) {
			return nil // Done is about to close
		}
	}
}

// electedWithin waits up to d for campaignAside's instant of election,
// and fails t with msg if none came. It reports false if the campaign
// failed (campaignAside said why).
func electedWithin(t *testing.T, elected <-chan time.Time, d time.Duration, msg string) (time.Time, bool) {
	t.Helper()
	select {
	case at, ok := <-elected:
		return at, ok
	case <-time.After(d):
		t.Fatal(msg)
		return time.Time{}, false
	}
}

// campaignAside campaigns on e in the background. Once elected, it sends
// the instant and resigns. It closes the channel if the campaign failed.
func campaignAside(t *testing.T, ctx context.Context, e *lock.Election) <-chan time.Time {
	elected := make(chan time.Time, 1)
	go func() {
		term, err := e.Campaign(ctx, "aside")
		if err != nil {
			if ctx.Err() == nil { // else the case has ended, failed
				t.Errorf("the second candidate's Campaign: %v", err)
			}
			close(elected)
			return
		}
		elected <- time.Now()
		term.Resign(ctx)
	}()
	return elected
}

// electionResign checks that a resignation elects a waiting candidate
// at once where the driver announces releases, and soon otherwise.
func (s *suite) electionResign(t *testing.T) {
	ctx := s.ctxFor(t)
	name := key(t, "")
	first, err := s.election(t, s.client(t), name, lock.WithTTL(time.Minute)).Campaign(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	poll := lock.FixedDelay(s.h.TTL / 10)
	if s.h.Wakeups {
		poll = lock.FixedDelay(time.Minute) // the release must wake the candidate
	}
	other := s.election(t, s.client(t), name, lock.WithRetry(poll))
	elected := campaignAside(t, ctx, other)
	time.Sleep(s.h.TTL / 2)
	resigned := time.Now()
	if err := first.Resign(ctx); err != nil {
		t.Fatalf("Resign: %v", err)
	}
	bound := max(8*s.h.TTL, 2*time.Second)
	at, ok := electedWithin(t, elected, bound,
		fmt.Sprintf("the second candidate was not elected within %v of the resignation (wake-ups: %v)", bound, s.h.Wakeups))
	if !ok {
		return
	}
	if at.Before(resigned) {
		t.Fatalf("the second candidate was elected %v before the leader resigned", resigned.Sub(at))
	}
	if wait := at.Sub(resigned); wait > s.h.TTL*4 {
		t.Errorf("the second candidate was elected %v after the resignation (wake-ups: %v)", wait, s.h.Wakeups)
	}
}

// electionObserve checks that an observer sees each of a few terms, in
// order, with its value and token. Each term lasts until the observer
// reported it, or two TTLs and at least 5s: reads on a loaded machine
// may fail for a while (a Redlock Inspect needs a quorum's answers), and
// a passing run waits no longer for it.
func (s *suite) electionObserve(t *testing.T) {
	ctx := s.ctxFor(t)
	name := key(t, "")
	if _, _, err := s.election(t, s.client(t), name).Leader(ctx); errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("the driver cannot tell who holds a key: %v", err)
	}
	octx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The observer's TTL sets its pace (a fifth of it), and nothing else.
	seen := s.election(t, s.client(t), name, lock.WithTTL(max(s.h.TTL/4, lock.MinTTL))).Observe(octx)
	es := []*lock.Election{s.election(t, s.client(t), name), s.election(t, s.client(t), name)}
	var last lock.Leader
	for i := range 3 {
		value := "v" + strconv.Itoa(i)
		term, err := es[i%2].Campaign(ctx, value)
		if err != nil {
			t.Fatalf("Campaign: %v", err)
		}
		tok, _ := term.Token()
		timeout := time.After(max(2*s.h.TTL, 5*time.Second))
	wait:
		for {
			select {
			case ld, ok := <-seen:
				if !ok {
					t.Fatal("Observe's channel closed while its context lasts")
				}
				if last.ID != "" && ld.Fenced && last.Fenced && ld.Token <= last.Token {
					t.Errorf("Observe sent token %v after %v", ld.Token, last.Token)
				}
				last = ld
				if ld.ID == term.Lock().ID() && (!s.h.Fencing || ld.Token == tok) {
					if ld.Value != value {
						t.Errorf("Observe sent value %q for term %d, want %q", ld.Value, i+1, value)
					}
					break wait
				}
				// On Redlock a new leader may show first with the last
				// term's token; anything else is another term.
				if ld.ID != term.Lock().ID() {
					t.Errorf("Observe sent %+v during term %d, whose ID is %s", ld, i+1, term.Lock().ID())
				}
			case <-timeout:
				t.Fatalf("Observe did not report term %d (ID %s, token %v) within %v", i+1, term.Lock().ID(), tok, max(2*s.h.TTL, 5*time.Second))
			}
		}
		if err := term.Resign(ctx); err != nil {
			t.Fatalf("Resign: %v", err)
		}
	}
	cancel()
	for range seen { // Observe ends with its context
	}
}
