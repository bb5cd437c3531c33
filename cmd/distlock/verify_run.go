package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/internal/netfault"
	"github.com/distlock/lock/internal/procs"
)

// The environment of a verify worker process, besides the engine's: the
// driver and the namespaced DSN it opens.
const (
	envVerifyDriver    = "DISTLOCK_VERIFY_DRIVER"
	envVerifyDSN       = "DISTLOCK_VERIFY_DSN"
	envVerifyNetFaults = "DISTLOCK_VERIFY_NETFAULTS" // "1": dial through a netfault.Dialer
)

// openFunc opens a connector for a driver's DSN, whose connections dial
// dials if it is not nil. The command's is openConnector; a test may wrap
// it (conformance.ShortLease).
type openFunc func(driverName, dsn string, dial driver.DialFunc) (driver.Connector, error)

// openConnector is the command's openFunc.
func openConnector(driverName, dsn string, dial driver.DialFunc) (driver.Connector, error) {
	if dial == nil {
		return lock.NewConnector(driverName, dsn)
	}
	return lock.NewConnectorDialer(driverName, dsn, dial)
}

// contention is a contention run of verify: worker processes contend for
// keys in a scratch namespace of the backend, while the nemesis pauses
// holders past their TTL, and the engine's checker reads what they did.
type contention struct {
	driver, dsn string // the user's; the DSN is never printed
	workers     int
	keys        int
	duration    time.Duration
	ttl         time.Duration
	timeout     time.Duration // for each call of this process's own to the backend
	sweepAfter  time.Duration // how old another run's namespace must be to be swept

	// open opens this process's connector (for the probe, the leftovers
	// count and the drop). Workers open theirs with verifyWorker's.
	open openFunc

	// command returns a worker process, not started. nil: this executable
	// again, which main turns into a worker by its environment.
	command func() (*exec.Cmd, error)
}

// contentionResult is what a contention run saw and left.
type contentionResult struct {
	procs.Result
	namespace string   // what the scratch namespace was
	fenced    bool     // the driver gave the probe a fencing token
	netFaults bool     // the workers' connections were reset and slowed
	swept     []string // stale namespaces of earlier runs, dropped
	sweepErr  error    // the sweep failed (the run went on)
	dropped   bool     // the namespace was dropped
	left      string   // what is left of it, if not dropped
	dropErr   error    // the drop failed
	inspected bool     // leftovers were counted
}

// run runs c until its duration has passed or ctx ends. The namespace is
// dropped when it returns, whatever happened, where the driver can drop
// it. The result says what was dropped or left even with an error.
func (c contention) run(ctx context.Context) (res contentionResult, err error) {
	runName, err := randomRunName(time.Now())
	if err != nil {
		return res, err
	}
	ns, err := verifyNamespaced(c.driver, c.dsn, runName)
	if err != nil {
		return res, err
	}
	res.namespace = ns.what
	connector, err := c.open(c.driver, ns.dsn, nil)
	if err != nil {
		return res, failure(exitUsage, "%v", err)
	}
	// The workers' connections take faults where the driver dials
	// through a dialer of the caller's.
	var nd net.Dialer
	_, err = c.open(c.driver, ns.dsn, nd.DialContext)
	res.netFaults = err == nil
	client := lock.OpenConnector(connector)
	defer client.Close()
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	conn, err := connector.Connect(cctx)
	cancel()
	if err != nil {
		return res, fmt.Errorf("connecting: %w", err)
	}
	defer conn.Close()
	// From here on, the namespace may exist: it is dropped at the end.
	defer func() { res.dropped, res.left, res.dropErr = dropNamespace(conn, ns.what, c.timeout) }()
	alive, err := c.takeAlive(ctx, client)
	if err != nil {
		return res, err
	}
	defer alive.Release(context.Background())
	defer alive.KeepAlive()()
	_, res.fenced = alive.Token()
	res.swept, res.sweepErr = c.sweep(ctx, conn, ns.run)
	dir, err := os.MkdirTemp("", "distlock-verify-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	cfg := procs.Config{
		Workers: c.workers, Keys: c.keys, Duration: c.duration, TTL: c.ttl, Fenced: res.fenced,
		PauseHolders: true,
		NetFaults:    res.netFaults,
		Dir:          dir,
		Command:      func(int) (*exec.Cmd, error) { return c.workerCommand(ns.dsn, res.netFaults) },
	}
	if insp, ok := conn.(driver.Inspector); ok {
		res.inspected = true
		cfg.Leftovers = func() int { return c.leftovers(insp) }
	}
	res.Result, err = procs.Run(ctx, cfg)
	return res, err
}

// takeAlive takes the run's alive lock, the first lock in the scratch
// namespace, which the run keeps alive until it ends: a backend that
// cannot lock fails at once, the lock's token says whether the backend
// fences, and a later run that finds the namespace sees that this run
// is still in it (see sweep).
func (c contention) takeAlive(ctx context.Context, client *lock.Client) (*lock.Lock, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	l, err := client.Acquire(ctx, aliveKey, lock.WithTTL(c.ttl))
	if err != nil {
		return nil, fmt.Errorf("a first lock in the scratch namespace: %w", err)
	}
	return l, nil
}

// leftovers counts the run's keys that someone still holds.
func (c contention) leftovers(insp driver.Inspector) int {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	n := 0
	for i := range c.keys {
		if _, held, err := insp.Inspect(ctx, procs.KeyName(i)); err == nil && held {
			n++
		}
	}
	return n
}

// workerCommand is a worker process: c.command's, or this executable
// again, told the driver and the namespaced DSN by its environment (not
// its arguments, which other users of the machine can read), and whether
// to dial through a dialer that the nemesis breaks.
func (c contention) workerCommand(dsn string, netFaults bool) (*exec.Cmd, error) {
	var cmd *exec.Cmd
	if c.command != nil {
		var err error
		if cmd, err = c.command(); err != nil {
			return nil, err
		}
	} else {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("finding distlock's own binary for the workers: %w", err)
		}
		cmd = exec.Command(exe)
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, envVerifyDriver+"="+c.driver, envVerifyDSN+"="+dsn)
	if netFaults {
		cmd.Env = append(cmd.Env, envVerifyNetFaults+"=1")
	}
	return cmd, nil
}

// dropNamespace drops the run's namespace through conn, under a timeout
// of its own (the run's context may have ended). A driver that cannot
// drop one leaves it: left says what stays, and that its locks expire.
func dropNamespace(conn driver.Conn, what string, timeout time.Duration) (dropped bool, left string, err error) {
	d, ok := conn.(driver.Dropper)
	if !ok {
		return false, what + " stays (the driver cannot drop it); its locks expire a TTL after the run", nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := d.Drop(ctx); err != nil {
		return false, what + " stays: dropping it failed; its locks expire a TTL after the run", err
	}
	return true, "", nil
}

// randomRunName names a run begun at now: the Unix time in seconds and 8
// random digits, in hex, joined by an underscore ("675382b1_1a2b3c4d"),
// so that a later run can tell the run's age from its namespace's name.
func randomRunName(now time.Time) (string, error) {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return strconv.FormatInt(now.Unix(), 16) + "_" + hex.EncodeToString(b), nil
}

// verifyWorker is the life of a verify worker process, which main starts
// when the environment says it is one. It opens the backend with open and
// contends as the engine's worker does. It returns the exit code.
func verifyWorker(open openFunc) int {
	w, _, err := procs.WorkerFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "distlock: verify worker:", err)
		return exitBackend
	}
	var dial driver.DialFunc
	if os.Getenv(envVerifyNetFaults) == "1" {
		nd := new(netfault.Dialer)
		stop, err := w.ServeNetFaults(nd)
		if err != nil {
			fmt.Fprintln(os.Stderr, "distlock: verify worker:", err)
			return exitBackend
		}
		defer stop()
		dial = nd.Dial
	}
	connector, err := open(os.Getenv(envVerifyDriver), os.Getenv(envVerifyDSN), dial)
	if err != nil {
		fmt.Fprintln(os.Stderr, "distlock: verify worker:", err)
		return exitBackend
	}
	client := lock.OpenConnector(connector)
	defer client.Close()
	if err := procs.Work(client, w); err != nil {
		fmt.Fprintln(os.Stderr, "distlock: verify worker:", err)
		return exitBackend
	}
	return exitOK
}

// isVerifyWorker reports whether this process is a verify worker.
func isVerifyWorker() bool {
	return os.Getenv(procs.EnvWorker) != "" && os.Getenv(envVerifyDriver) != ""
}
