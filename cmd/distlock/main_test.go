package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/internal/redistest"
	"github.com/distlock/lock/internal/testenv"
)

// envTestShortLease, set to a number in a test's environment, makes the
// workers of the verify runs it starts in-process use
// conformance.ShortLease with that shrink: an unsafe driver, which verify
// must catch.
const envTestShortLease = "DISTLOCK_TEST_SHORT_LEASE"

// testVerifyOpen is verify's connector for the workers that this test
// binary runs: openConnector's, made unsafe if the test asks for it.
func testVerifyOpen(driverName, dsn string, dial driver.DialFunc) (driver.Connector, error) {
	c, err := openConnector(driverName, dsn, dial)
	if err != nil {
		return nil, err
	}
	if n, err := strconv.Atoi(os.Getenv(envTestShortLease)); err == nil {
		return conformance.ShortLease(c, n), nil
	}
	return c, nil
}

// binary is the distlock command built by TestMain, which the tests run
// as a subprocess, as users do.
var binary string

// TestMain builds the command, with the race detector if the tests have
// it (so that the subprocesses' races fail the tests too), then runs the
// tests holding the Redis servers alone (the lost-lock test hangs some of
// them), PostgreSQL and MongoDB shared (so that no other package restarts
// them meanwhile).
func TestMain(m *testing.M) {
	if isVerifyWorker() { // a worker of a verify run that a test started in-process
		os.Exit(verifyWorker(testVerifyOpen))
	}
	var flags []string
	if raceEnabled {
		flags = append(flags, "-race")
	}
	testenv.MainBuilding(m, &binary, ".", flags, testenv.Redis, testenv.Postgres, testenv.MongoDB)
}

// runResult is what one run of the command did.
type runResult struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// invocation is one run of the command being prepared.
type invocation struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	start          time.Time
}

// newInvocation prepares a run of the command with args, in an environment
// without the DISTLOCK_ variables of the test's own, plus env.
func newInvocation(t *testing.T, env []string, args ...string) *invocation {
	t.Helper()
	inv := &invocation{cmd: exec.Command(binary, args...)}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DISTLOCK_") {
			inv.cmd.Env = append(inv.cmd.Env, kv)
		}
	}
	// With the race detector, a process sleeps 1s at exit by default.
	inv.cmd.Env = append(inv.cmd.Env, "GORACE=atexit_sleep_ms=0 "+os.Getenv("GORACE"))
	inv.cmd.Env = append(inv.cmd.Env, env...)
	inv.cmd.Stdout, inv.cmd.Stderr = &inv.stdout, &inv.stderr
	inv.cmd.WaitDelay = 5 * time.Second // a CMD left running must not hang the test
	return inv
}

// startIn starts the command, and kills it at the end of the test if it is
// still running then.
func (inv *invocation) startIn(t *testing.T) *invocation {
	t.Helper()
	inv.start = time.Now()
	if err := inv.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if inv.cmd.ProcessState == nil {
			inv.cmd.Process.Kill()
			inv.cmd.Wait()
		}
	})
	return inv
}

// wait waits for the started command, for at most limit.
func (inv *invocation) wait(t *testing.T, limit time.Duration) runResult {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- inv.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(limit):
		inv.cmd.Process.Kill()
		<-done
		t.Fatalf("distlock %q still ran after %v; stderr: %s", inv.cmd.Args[1:], limit, inv.stderr.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("distlock %q: %v", inv.cmd.Args[1:], err)
	}
	return runResult{stdout: inv.stdout.String(), stderr: inv.stderr.String(), code: inv.cmd.ProcessState.ExitCode(), took: time.Since(inv.start)}
}

// runDistlock runs the command to its end, for at most 20s.
func runDistlock(t *testing.T, env []string, args ...string) runResult {
	t.Helper()
	return newInvocation(t, env, args...).startIn(t).wait(t, 20*time.Second)
}

// want fails the test unless r ended with code, naming what it printed.
func (r runResult) want(t *testing.T, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstdout: %s\nstderr: %s", r.code, code, r.stdout, r.stderr)
	}
}

// backendCase is a backend the command is run against, by flags.
type backendCase struct {
	name, driver, dsn string
	fenced            bool
}

// pgBackend is the test PostgreSQL server.
func pgBackend(t *testing.T) backendCase {
	return backendCase{name: "postgres", driver: "postgres", dsn: testenv.PostgresDSN(t), fenced: true}
}

// redisBackend is the five test Redis servers, over goredis, with query (the
// tests' roomy node timeout and any more parameters).
func redisBackend(t *testing.T, query string) backendCase {
	q := "node_timeout=250ms" + query
	return backendCase{name: "goredis", driver: "goredis", dsn: redistest.DSN(testenv.RedisAddrs(t), q), fenced: strings.Contains(q, "fencing=true")}
}

// flags are the --driver and --dsn flags for b.
func (b backendCase) flags() []string { return []string{"--driver", b.driver, "--dsn", b.dsn} }

// client opens a lock client on b for the test's own checks.
func (b backendCase) client(t *testing.T) *lock.Client {
	t.Helper()
	c, err := lock.Open(b.driver, b.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var keySeq atomic.Int64

// testKey returns a key no other test, or earlier run, uses.
func testKey(t *testing.T) string {
	return fmt.Sprintf("cmd-distlock-test/%s/%d-%d", t.Name(), time.Now().UnixNano(), keySeq.Add(1))
}

// waitHeld waits until someone holds key, as c's Inspect tells, and
// returns the holder.
func waitHeld(t *testing.T, c *lock.Client, key string) lock.Holder {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		h, held, err := c.Inspect(t.Context(), key)
		if err != nil {
			t.Fatalf("Inspect: %v", err)
		}
		if held {
			return h
		}
		if time.Now().After(deadline) {
			t.Fatalf("nobody took %q within 15s", key)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// mustBeFree checks that key can be taken at once, and lets it go.
func mustBeFree(t *testing.T, c *lock.Client, key string) {
	t.Helper()
	l, err := c.TryAcquire(t.Context(), key)
	if err != nil {
		t.Fatalf("key %q is not free: %v", key, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
