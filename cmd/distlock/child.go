package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/distlock/lock"
)

// The variables run sets in CMD's environment; any of them that distlock
// itself inherited (from an outer 'distlock run') is removed first, so
// that CMD never sees another lock's token.
const (
	envKey    = "DISTLOCK_KEY"
	envLockID = "DISTLOCK_LOCK_ID"
	envToken  = "DISTLOCK_TOKEN"
)

// child is CMD, run while its lock is held.
type child struct {
	argv   []string // as given: argv[0] is what CMD sees as its name
	path   string   // argv[0], looked up in $PATH
	stdout io.Writer
	stderr io.Writer
	grace  time.Duration // between SIGTERM and SIGKILL, after a lost lock
}

// runUnder runs CMD while it keeps l alive, with the signals relayed by
// r, and returns its exit code. If l ends first (lost), CMD is stopped,
// and the code is exitLost. err is set only if CMD could not be started.
func (c *child) runUnder(l *lock.Lock, r *relay) (code int, err error) {
	stop := l.KeepAlive()
	defer stop()
	cmd := &exec.Cmd{Path: c.path, Args: c.argv, Env: childEnv(os.Environ(), l),
		Stdin: os.Stdin, Stdout: c.stdout, Stderr: c.stderr}
	if err := r.start(cmd); err != nil {
		return 0, err
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait() //nolint:errcheck // the exit status is read from ProcessState
		close(exited)
	}()
	select {
	case <-exited:
		return exitStatus(cmd.ProcessState), nil
	case <-l.Done():
	}
	select {
	case <-exited: // CMD was done as the lock ended: its result stands
		return exitStatus(cmd.ProcessState), nil
	default:
	}
	// The client's logger says why, with the last extension's failure.
	fmt.Fprintf(c.stderr, "distlock: run: lost the lock on %q: stopping %s (SIGTERM, then SIGKILL after %v)\n",
		l.Key(), c.argv[0], c.grace)
	c.stop(cmd.Process, exited)
	return exitLost, nil
}

// stop sends CMD SIGTERM, and SIGKILL if it has not exited after the
// grace period, and waits for it to exit.
func (c *child) stop(p *os.Process, exited <-chan struct{}) {
	p.Signal(syscall.SIGTERM) //nolint:errcheck // it may have just exited
	t := time.NewTimer(c.grace)
	defer t.Stop()
	select {
	case <-exited:
		return
	case <-t.C:
	}
	fmt.Fprintf(c.stderr, "distlock: run: %s still runs %v after SIGTERM: killing it\n", c.argv[0], c.grace)
	p.Kill() //nolint:errcheck
	<-exited
}

// exitStatus is CMD's exit code as a shell reports it: 128+N if it died
// of signal N.
func exitStatus(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// childEnv is environ without any of run's variables, followed by l's.
func childEnv(environ []string, l *lock.Lock) []string {
	ours := []string{envKey, envLockID, envToken}
	env := slices.DeleteFunc(slices.Clone(environ), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(ours, name)
	})
	env = append(env, envKey+"="+l.Key(), envLockID+"="+l.ID())
	if tok, ok := l.Token(); ok {
		env = append(env, envToken+"="+tok.String())
	}
	return env
}
