package main

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/fencing"
)

// eventKind is what a candidate tells the watcher.
type eventKind int

const (
	elected eventKind = iota // its Lead was elected: it leads
	stepped                  // its term ended: it returned, and Lead resigns
	lost                     // its Lead's context was cancelled because the term was lost
	failed                   // its Lead failed without running (a backend error)
)

// event is one thing a candidate did.
type event struct {
	kind      eventKind
	candidate int           // from 1
	token     fencing.Token // elected: the lock's fencing token, if fenced
	fenced    bool
	rounds    int   // stepped: the rounds of work it did in its term
	err       error // failed: why
}

// candidate campaigns for the lock with a client of its own.
type candidate struct {
	id     int
	client *lock.Client
	cfg    config
	events chan<- event
}

// campaignAll runs one candidate per client until ctx ends.
func campaignAll(ctx context.Context, clients []*lock.Client, events chan<- event, cfg config) {
	var wg sync.WaitGroup
	for i, c := range clients {
		cd := &candidate{id: i + 1, client: c, cfg: cfg, events: events}
		wg.Go(func() { cd.campaign(ctx) })
	}
	wg.Wait()
}

// campaign loops on Election.Lead until ctx ends or the candidate crashes
// (its client is closed). After each term it rests, so that leadership
// moves. Its value, which everyone can read with Election.Leader, is its
// name.
func (cd *candidate) campaign(ctx context.Context) {
	report := func(e event) {
		e.candidate = cd.id
		select {
		case cd.events <- e:
		case <-ctx.Done():
		}
	}
	e, err := cd.client.Election(cd.cfg.Key)
	if err != nil {
		report(event{kind: failed, err: err})
		return
	}
	for ctx.Err() == nil {
		err := e.Lead(ctx, "candidate-"+strconv.Itoa(cd.id), func(ctx context.Context) error { return cd.lead(ctx, report) })
		switch {
		case errors.Is(err, lock.ErrClosed), ctx.Err() != nil:
			return // crashed, or the program ends
		case err != nil && !errors.Is(err, lock.ErrLost):
			report(event{kind: failed, err: err})
		}
		select {
		case <-time.After(cd.cfg.rest()):
		case <-ctx.Done():
		}
	}
}

// lead is the leader's work: rounds of it until the term ends or ctx is
// cancelled. A leader whose term is lost says so; one whose client was
// closed (it crashed) or whose program ends says nothing. ctx carries the
// term's lock, and so its fencing token.
func (cd *candidate) lead(ctx context.Context, report func(event)) error {
	tok, fenced := lock.FromContext(ctx).Token()
	report(event{kind: elected, token: tok, fenced: fenced})
	work := time.NewTicker(cd.cfg.TTL / 2)
	defer work.Stop()
	end := time.NewTimer(cd.cfg.term())
	defer end.Stop()
	for rounds := 0; ; {
		select {
		case <-work.C:
			rounds++ // one round of the leader's work
		case <-end.C:
			report(event{kind: stepped, rounds: rounds})
			return nil
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), lock.ErrLost) {
				report(event{kind: lost})
			}
			return context.Cause(ctx)
		}
	}
}
