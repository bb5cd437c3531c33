package main

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os/exec"
	"time"

	"github.com/distlock/lock"
)

const (
	// firstAttemptTimeout bounds run's first attempt at the key, which
	// also connects to the backend: a backend that does not answer by
	// then is reported as unavailable rather than waited for forever.
	firstAttemptTimeout = 15 * time.Second

	// releaseTimeout bounds the release at the end of run. It runs
	// under a context of its own: the one run was given may be cancelled.
	releaseTimeout = 5 * time.Second

	// Exit codes of a CMD that could not be started, as a shell reports them.
	exitCannotExec = 126
	exitNotFound   = 127
)

const runAbout = `Runs CMD while holding the lock on key K, as flock(1) does with a file: the
lock is acquired first (waiting while another holder has it, unless --wait or
--no-wait says otherwise), kept alive in the background while CMD runs, and
released when CMD exits. CMD inherits distlock's stdin, stdout and stderr
(distlock prints nothing on stdout) and its environment, with DISTLOCK_KEY,
DISTLOCK_LOCK_ID and, if the driver issues fencing tokens, DISTLOCK_TOKEN
(the token in decimal; pass it with CMD's writes so that the resource can
refuse a stale holder's).

If the lock is lost while CMD runs (the backend refused or failed to extend
it until its validity ran out), CMD gets SIGTERM, then SIGKILL after --grace,
and distlock exits 76. SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to distlock
are passed on to CMD (at a terminal, Ctrl-C reaches CMD from the terminal as
well); distlock waits for CMD, releases the lock and exits with CMD's code.
The first attempt must reach the backend within 15s.

With --max N, K names a semaphore of N permits instead, as 'consul lock -n'
does: at most N commands run under K at once, across every client of the
backend. CMD runs under one permit, kept alive and released like a lock.
DISTLOCK_KEY is then the permit's slot key (K, a unit separator, "sem", a
unit separator and the slot's number), and DISTLOCK_TOKEN that slot's token:
a resource that checks tokens keeps one per slot. Every client of K must
give the same N; while permits of another N are held, run exits 64.

Exit codes: CMD's own (128+N if CMD died of signal N); 64 bad usage;
69 backend error; 75 the key is held by another holder (after --no-wait, or
once --wait passed); 76 the lock was lost and CMD was stopped; 126 or 127
CMD could not be run.`

const runExamples = `  distlock run --driver postgres --dsn "$PG_URL" --key nightly-report -- ./report.sh
  DISTLOCK_DRIVER=goredis DISTLOCK_DSN='redis://r1:6379,redis://r2:6379,redis://r3:6379?fencing=true' \
    distlock run --key deploy --no-wait -- sh -c 'make deploy FENCE="$DISTLOCK_TOKEN"'
  distlock run --driver postgres --dsn "$PG_URL" --key backup --wait 5m --ttl 1m -- pg_dump -f backup.sql
  distlock run --driver postgres --dsn "$PG_URL" --key crawler --max 3 -- ./fetch.sh`

// runOptions are the parsed flags and arguments of 'distlock run'.
type runOptions struct {
	cmd     *command
	backend backend
	key     string
	max     int // above 0: key names a semaphore of max permits
	ttl     time.Duration
	wait    time.Duration // 0: wait as long as it takes
	noWait  bool
	grace   time.Duration
	argv    []string // CMD and its arguments
}

// runCmd runs 'distlock run'.
func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	stderr = &lockedWriter{w: stderr} // CMD's supervision, the relay and the client's logger all print
	o, err := parseRun(args, stdout)
	if err != nil {
		return report(stderr, "run", err)
	}
	code, err := o.run(ctx, stdout, stderr)
	if err != nil {
		return report(stderr, "run", err)
	}
	return code
}

// parseRun parses the arguments of 'distlock run' and checks them.
func parseRun(args []string, stdout io.Writer) (*runOptions, error) {
	o := &runOptions{cmd: newCommand("run",
		"distlock run --driver D --dsn S --key K [--max N] [--ttl T] [--wait DUR | --no-wait] [--grace G] -- CMD [ARGS...]",
		runAbout, runExamples)}
	flags := o.cmd.fs
	o.backend.register(o.cmd)
	flags.StringVar(&o.key, "key", "", "the lock's key (required)")
	flags.IntVar(&o.max, "max", 0, "run under one of N permits of the semaphore K, instead of the lock K (default: the lock)")
	flags.DurationVar(&o.ttl, "ttl", 30*time.Second, "the lock's lease, renewed every third of it while CMD runs")
	flags.DurationVar(&o.wait, "wait", 0, "give up (exit 75) if the key is still held after this long (default: wait as long as it takes)")
	flags.BoolVar(&o.noWait, "no-wait", false, "make one attempt only: exit 75 at once if the key is held")
	flags.DurationVar(&o.grace, "grace", 10*time.Second, "after a lost lock, how long CMD has between SIGTERM and SIGKILL")
	if err := o.cmd.parse(args, stdout); err != nil {
		return nil, err
	}
	o.argv = flags.Args()
	switch {
	case o.key == "":
		return nil, failure(exitUsage, "--key is required")
	case len(o.argv) == 0:
		return nil, failure(exitUsage, "no command to run: give it after the flags, as in -- CMD [ARGS...]")
	case o.cmd.set("max") && (o.max < 1 || o.max > lock.MaxPermits):
		return nil, failure(exitUsage, "--max %d is outside [1, %d]", o.max, lock.MaxPermits)
	case o.ttl < lock.MinTTL || o.ttl > lock.MaxTTL:
		return nil, failure(exitUsage, "--ttl %v is outside [%v, %v]", o.ttl, lock.MinTTL, lock.MaxTTL)
	case o.noWait && o.cmd.set("wait"):
		return nil, failure(exitUsage, "--wait and --no-wait exclude each other")
	case o.cmd.set("wait") && o.wait <= 0:
		return nil, failure(exitUsage, "--wait %v is not positive (--no-wait makes one attempt)", o.wait)
	case o.grace < 0:
		return nil, failure(exitUsage, "--grace %v is negative", o.grace)
	}
	return o, nil
}

// run acquires the lock, runs CMD under it and releases it. It returns
// the exit code, or the error that ended it before CMD could run.
func (o *runOptions) run(ctx context.Context, stdout, stderr io.Writer) (int, error) {
	r := newRelay(ctx) // first, so that a signal never finds distlock without it
	defer r.stop()
	path, err := exec.LookPath(o.argv[0])
	if err != nil {
		return 0, cannotRun(err)
	}
	client, err := o.backend.open(o.cmd, stderr)
	if err != nil {
		return 0, err
	}
	defer client.Close()
	l, err := o.acquire(r.ctx, client)
	if err != nil {
		if sig, ok := r.interruption(); ok {
			return 128 + int(sig), nil
		}
		return 0, o.acquireFailure(err)
	}
	c := &child{argv: o.argv, path: path, stdout: stdout, stderr: stderr, grace: o.grace}
	code, err := c.runUnder(l, r)
	release(ctx, l)
	if err != nil {
		if sig, ok := r.interruption(); ok {
			return 128 + int(sig), nil // a signal came before CMD could start
		}
		return 0, cannotRun(err)
	}
	return code, nil
}

// acquire takes the key. The first attempt is a single one (which also
// connects), so that an unreachable backend fails at once even when
// waiting: Acquire alone would retry through backend errors. Then, unless
// --no-wait, Acquire waits for the key, within --wait if given.
func (o *runOptions) acquire(ctx context.Context, c *lock.Client) (*lock.Lock, error) {
	if o.wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.wait)
		defer cancel()
	}
	var try, wait func(context.Context) (*lock.Lock, error)
	if o.max > 0 {
		s, err := c.Semaphore(o.key, o.max, lock.WithTTL(o.ttl))
		if err != nil {
			return nil, err
		}
		try, wait = func(ctx context.Context) (*lock.Lock, error) { return s.TryAcquire(ctx) }, func(ctx context.Context) (*lock.Lock, error) { return s.Acquire(ctx) }
	} else {
		try = func(ctx context.Context) (*lock.Lock, error) { return c.TryAcquire(ctx, o.key, lock.WithTTL(o.ttl)) }
		wait = func(ctx context.Context) (*lock.Lock, error) { return c.Acquire(ctx, o.key, lock.WithTTL(o.ttl)) }
	}
	first, cancel := context.WithTimeout(ctx, firstAttemptTimeout)
	l, err := try(first)
	cancel()
	if o.noWait || !errors.Is(err, lock.ErrNotAcquired) {
		return l, err
	}
	return wait(ctx)
}

// acquireFailure is the error with which run ends when it could not take
// the key.
func (o *runOptions) acquireFailure(err error) error {
	switch {
	case errors.Is(err, lock.ErrNotAcquired) && o.max > 0 && o.wait > 0:
		return failure(exitHeld, "all %d permits of %q are still held after --wait %v", o.max, o.key, o.wait)
	case errors.Is(err, lock.ErrNotAcquired) && o.max > 0:
		return failure(exitHeld, "all %d permits of %q are held", o.max, o.key)
	case errors.Is(err, lock.ErrSizeMismatch):
		return failure(exitUsage, "%v", err)
	case errors.Is(err, lock.ErrNotAcquired) && o.wait > 0:
		return failure(exitHeld, "key %q is still held by another holder after --wait %v", o.key, o.wait)
	case errors.Is(err, lock.ErrNotAcquired):
		return failure(exitHeld, "key %q is held by another holder", o.key)
	case errors.Is(err, lock.ErrInvalidKey), errors.Is(err, lock.ErrInvalidTTL):
		return failure(exitUsage, "%v", err)
	}
	return failure(exitBackend, "%v", err)
}

// release releases l under a timeout of its own, since ctx may be
// cancelled. If it fails, the client's Close tries again, and its logger
// reports a lock that it could not release either.
func release(ctx context.Context, l *lock.Lock) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	l.Release(ctx) //nolint:errcheck // see above
}

// cannotRun is the error of a CMD that could not be started: 127 if it
// was not found, 126 otherwise, as a shell reports it.
func cannotRun(err error) error {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return failure(exitNotFound, "%v", err)
	}
	return failure(exitCannotExec, "%v", err)
}
