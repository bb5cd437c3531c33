package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// relayed are the signals that would end distlock by default. Each one
// ends distlock's wait for the lock before CMD starts, and is passed on to
// CMD once it runs: ending distlock instead would leave CMD running with
// nobody keeping its lock alive.
var relayed = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// signalLag is how long interruption waits for the relay to hear of a
// signal that has already cancelled the context run was given: main's
// context hears the same signals, and the relay may trail it by a
// scheduling delay.
const signalLag = time.Second

// interrupted is the cause of the relay's context when a signal arrived
// before CMD started.
type interrupted struct{ sig syscall.Signal }

func (e *interrupted) Error() string { return fmt.Sprintf("interrupted by %v", e.sig) }

// relay hands the signals distlock receives to CMD. Until CMD starts, the
// first one cancels ctx, which the acquisition runs under, and CMD is not
// started at all; once CMD runs, each one is sent to CMD, and only to CMD
// (not to its process group).
type relay struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	sigs   chan os.Signal
	quit   chan struct{}
	done   chan struct{}

	mu    sync.Mutex
	proc  *os.Process    // CMD, once started
	first syscall.Signal // the signal that came before CMD started, if any
	heard chan struct{}  // closed when first is set
}

// newRelay starts relaying the signals, with a context derived from parent.
func newRelay(parent context.Context) *relay {
	r := &relay{sigs: make(chan os.Signal, 8), quit: make(chan struct{}), done: make(chan struct{}), heard: make(chan struct{})}
	r.ctx, r.cancel = context.WithCancelCause(parent)
	signal.Notify(r.sigs, relayed...)
	go r.loop()
	return r
}

func (r *relay) loop() {
	defer close(r.done)
	for {
		select {
		case s := <-r.sigs:
			r.pass(s.(syscall.Signal))
		case <-r.quit:
			return
		}
	}
}

// pass sends s to CMD if it runs, and otherwise cancels the context.
func (r *relay) pass(s syscall.Signal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.proc != nil:
		r.proc.Signal(s) //nolint:errcheck // CMD may have exited already
	case r.first == 0:
		r.first = s
		close(r.heard)
		r.cancel(&interrupted{s})
	}
}

// start starts cmd, unless a signal came first: then it returns the
// signal's interrupted error and cmd never runs.
func (r *relay) start(cmd *exec.Cmd) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.first != 0 {
		return &interrupted{r.first}
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	r.proc = cmd.Process
	return nil
}

// interruption returns the signal that came before CMD started, if one
// did. If the context was cancelled by its parent, it waits up to
// signalLag for the signal behind that.
func (r *relay) interruption() (syscall.Signal, bool) {
	if r.ctx.Err() == nil {
		return 0, false
	}
	select {
	case <-r.heard:
	case <-time.After(signalLag):
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first, r.first != 0
}

// stop ends the relaying; signals get their default treatment again.
func (r *relay) stop() {
	signal.Stop(r.sigs)
	close(r.quit)
	<-r.done
	r.cancel(nil)
}
