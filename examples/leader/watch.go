package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/distlock/lock"
)

// watcher follows the terms as the candidates report them, and ends each
// odd term by crashing its leader.
type watcher struct {
	w       io.Writer
	clients []*lock.Client
	cfg     config

	term    int   // the current term, from 1
	leader  event // its leader's election
	prev    event // the previous term's leader's election
	inTerm  bool  // the current term has not ended
	crashAt <-chan time.Time
}

// watch prints the candidates' events until cfg.Terms terms have ended,
// and fails if leadership did not move or tokens did not increase.
func watch(ctx context.Context, w io.Writer, clients []*lock.Client, events <-chan event, cfg config) error {
	wt := &watcher{w: w, clients: clients, cfg: cfg}
	for wt.term < cfg.Terms || wt.inTerm {
		select {
		case e := <-events:
			if err := wt.handle(e); err != nil {
				return err
			}
		case <-wt.crashAt:
			wt.crash()
		case <-ctx.Done():
			return fmt.Errorf("term %d: %w", wt.term, context.Cause(ctx))
		}
	}
	return nil
}

// handle prints one event, and starts or ends a term by it.
func (wt *watcher) handle(e event) error {
	switch e.kind {
	case elected:
		return wt.elect(e)
	case stepped:
		fmt.Fprintf(wt.w, "term %d: candidate %d's term ends after %d rounds of work: it steps down and rests %v\n", wt.term, e.candidate, e.rounds, wt.cfg.rest())
	case lost:
		fmt.Fprintf(wt.w, "term %d: candidate %d lost the lock: it stops leading\n", wt.term, e.candidate)
	case failed:
		fmt.Fprintf(wt.w, "candidate %d could not campaign: %v\n", e.candidate, e.err)
		return nil
	}
	if e.candidate == wt.leader.candidate {
		wt.inTerm, wt.crashAt = false, nil
	}
	return nil
}

// elect starts a term with e's candidate, checking that leadership moved
// and that its token is newer than the last leader's.
func (wt *watcher) elect(e event) error {
	wt.term++
	wt.prev, wt.leader, wt.inTerm = wt.leader, e, true
	token := "no fencing token"
	if e.fenced {
		token = fmt.Sprintf("token %v", e.token)
	}
	fmt.Fprintf(wt.w, "term %d: candidate %d leads (%s)%s\n", wt.term, e.candidate, token, wt.reported())
	if wt.term > 1 && e.candidate == wt.prev.candidate {
		return fmt.Errorf("term %d: candidate %d leads again: leadership did not move", wt.term, e.candidate)
	}
	if wt.term > 1 && e.fenced && wt.prev.fenced && !e.token.Newer(wt.prev.token) {
		return fmt.Errorf("term %d: token %v is not newer than the last term's %v", wt.term, e.token, wt.prev.token)
	}
	if wt.term%2 == 1 { // an odd term's leader crashes halfway through it
		wt.crashAt = time.After(wt.cfg.term() / 2)
	}
	return nil
}

// reported returns what the election reports of its leader, as any process
// would read it: its value and token.
func (wt *watcher) reported() string {
	ctx, cancel := context.WithTimeout(context.Background(), wt.cfg.TTL)
	defer cancel()
	e, err := wt.clients[wt.leader.candidate-1].Election(wt.cfg.Key)
	if err != nil {
		return ""
	}
	ld, ok, err := e.Leader(ctx)
	if err != nil || !ok {
		return ""
	}
	return fmt.Sprintf("; Leader reports %s with token %v", ld.Value, ld.Token)
}

// crash closes the leader's client, as a crashed process's connection
// goes away: Close ends its term, cancelling its Lead's function, and
// frees the lead at once.
func (wt *watcher) crash() {
	fmt.Fprintf(wt.w, "term %d: candidate %d crashes: its client is closed, and the lock with it\n", wt.term, wt.leader.candidate)
	wt.inTerm, wt.crashAt = false, nil
	wt.clients[wt.leader.candidate-1].Close()
}
