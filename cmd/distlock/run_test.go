package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distlock/lock/internal/redistest"
)

// TestRun_passesTokenAndExitCode: CMD sees the lock's fencing token, key
// and ID in its environment, its stdout is the command's (distlock adds
// nothing), and its exit code is the command's; a second run gets a
// larger token. The environment's driver and DSN are the defaults, which
// flags override.
func TestRun_passesTokenAndExitCode(t *testing.T) {
	for _, b := range []backendCase{pgBackend(t), redisBackend(t, "&fencing=true")} {
		t.Run(b.name, func(t *testing.T) {
			key := testKey(t)
			byEnv := []string{"DISTLOCK_DRIVER=" + b.driver, "DISTLOCK_DSN=" + b.dsn, "DISTLOCK_TOKEN=999999"}
			script := `echo "$DISTLOCK_TOKEN $DISTLOCK_KEY $DISTLOCK_LOCK_ID"; exit 3`
			first := runDistlock(t, byEnv, "run", "--key", key, "--", "sh", "-c", script)
			first.want(t, 3)
			overridden := []string{"DISTLOCK_DRIVER=nosuchdriver", "DISTLOCK_DSN=nonsense"}
			second := runDistlock(t, overridden, append(append([]string{"run"}, b.flags()...), "--key", key, "sh", "-c", script)...)
			second.want(t, 3)
			var tokens [2]uint64
			for i, r := range []runResult{first, second} {
				if r.stderr != "" {
					t.Errorf("run %d printed on stderr: %q", i+1, r.stderr)
				}
				f := strings.Fields(r.stdout)
				if len(f) != 3 || f[1] != key || !regexp.MustCompile(`^[A-Za-z0-9_-]{8}$`).MatchString(f[2]) {
					t.Fatalf("run %d: CMD printed %q; want its token, key %q and ID", i+1, r.stdout, key)
				}
				tok, err := strconv.ParseUint(f[0], 10, 64)
				if err != nil || tok == 0 || tok == 999999 {
					t.Fatalf("run %d: DISTLOCK_TOKEN = %q, want the lock's token", i+1, f[0])
				}
				tokens[i] = tok
			}
			if tokens[1] <= tokens[0] {
				t.Errorf("tokens %d then %d: the second run's should be larger", tokens[0], tokens[1])
			}
		})
	}
}

// TestRun_noTokenWithoutFencing: on a driver that issues no token, CMD
// has no DISTLOCK_TOKEN, not even one distlock inherited.
func TestRun_noTokenWithoutFencing(t *testing.T) {
	b := redisBackend(t, "")
	r := runDistlock(t, []string{"DISTLOCK_TOKEN=7"}, append(append([]string{"run"}, b.flags()...),
		"--key", testKey(t), "--", "sh", "-c", `echo "${DISTLOCK_TOKEN-unset}"`)...)
	r.want(t, 0)
	if r.stdout != "unset\n" {
		t.Errorf("CMD printed %q for DISTLOCK_TOKEN; want it unset", r.stdout)
	}
}

// holdKey starts a run that holds key on b until the test ends or the
// run gets SIGTERM, and returns it once it holds the key.
func holdKey(t *testing.T, b backendCase, key string) *invocation {
	t.Helper()
	ready := filepath.Join(t.TempDir(), "ready")
	inv := newInvocation(t, nil, append(append([]string{"run"}, b.flags()...),
		"--key", key, "--", "sh", "-c", `touch "$0" && exec sleep 30`, ready)...).startIn(t)
	inv.waitFile(t, ready)
	return inv
}

// stop ends the run holdKey started, with SIGTERM, which its CMD dies of.
func (inv *invocation) stop(t *testing.T) {
	t.Helper()
	inv.cmd.Process.Signal(syscall.SIGTERM)
	inv.wait(t, 10*time.Second).want(t, 128+int(syscall.SIGTERM))
}

// waitFile waits until CMD of the started run inv has created path.
func (inv *invocation) waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CMD did not create %s within 15s; stderr: %s", path, inv.stderr.String())
		}
	}
}

// waitSocket waits until the started run inv has a socket open, that is
// until it has begun to contact its backend. It reads /proc, and on a
// system without it waits 2s instead.
func (inv *invocation) waitSocket(t *testing.T) {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", inv.cmd.Process.Pid)
	if _, err := os.Stat(dir); err != nil {
		time.Sleep(2 * time.Second)
		return
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		fds, _ := os.ReadDir(dir)
		for _, fd := range fds {
			if target, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && strings.HasPrefix(target, "socket:") {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run opened no socket within 15s; stderr: %s", inv.stderr.String())
		}
	}
}

// TestRun_heldKeyExits75: while a first run holds the key, a second one
// with --no-wait exits 75 at once, one with --wait 500ms exits 75 after
// about that long, one that waits ends at SIGHUP without running CMD,
// and one with a longer --wait runs CMD once the first ends.
func TestRun_heldKeyExits75(t *testing.T) {
	for _, b := range []backendCase{pgBackend(t), redisBackend(t, "")} {
		t.Run(b.name, func(t *testing.T) {
			key := testKey(t)
			args := append(append([]string{"run"}, b.flags()...), "--key", key)
			holder := holdKey(t, b, key)

			r := runDistlock(t, nil, append(args, "--no-wait", "--", "echo", "ran")...)
			r.want(t, exitHeld)
			if r.stdout != "" || !strings.HasPrefix(r.stderr, "distlock: run: ") || !strings.Contains(r.stderr, "held by another") {
				t.Errorf("--no-wait on a held key: stdout %q, stderr %q", r.stdout, r.stderr)
			}
			r = runDistlock(t, nil, append(args, "--wait", "500ms", "--", "echo", "ran")...)
			r.want(t, exitHeld)
			// The process's start and connection count too: a -race binary
			// beside make test's other packages took 3.2s in all, once. A
			// run that ignored --wait would wait for the holder, who holds
			// until the test ends.
			if r.stdout != "" || r.took < 500*time.Millisecond || r.took > 10*time.Second {
				t.Errorf("--wait 500ms on a held key took %v (want 500ms and the process's start), printed %q", r.took, r.stdout)
			}

			// A signal ends a wait for the key as it would end CMD: 128+N.
			// (Killed before it set up its relay, the run would have no
			// exit code at all.) SIGHUP, since main's context ends at
			// SIGINT and SIGTERM by itself.
			interrupted := newInvocation(t, nil, append(args, "--", "echo", "ran")...).startIn(t)
			// Sent before the relay is set up, SIGHUP would kill the run
			// (exit -1): a -race binary started beside other packages' tests
			// once took more than 2s to get there. A socket opens only in the
			// acquisition, which starts after the relay.
			interrupted.waitSocket(t)
			interrupted.cmd.Process.Signal(syscall.SIGHUP)
			if r := interrupted.wait(t, 10*time.Second); r.code != 128+int(syscall.SIGHUP) || r.stdout != "" {
				t.Errorf("SIGHUP while waiting: exit %d, stdout %q, stderr %q; want 129 and no CMD", r.code, r.stdout, r.stderr)
			}

			waiter := newInvocation(t, nil, append(args, "--wait", "15s", "--", "echo", "ran")...).startIn(t)
			holder.stop(t)
			r = waiter.wait(t, 15*time.Second)
			r.want(t, 0)
			if r.stdout != "ran\n" {
				t.Errorf("the waiting run's CMD printed %q", r.stdout)
			}
		})
	}
}

// TestRun_lostLockStopsCMD: a lock whose extensions fail (three of five
// Redis nodes hang) ends by its validity, at most a TTL after the last
// extension; distlock then stops CMD with SIGTERM and exits 76. A CMD
// that dies of the SIGTERM ends long before its 30s grace; one that
// ignores it is killed after its 500ms grace.
func TestRun_lostLockStopsCMD(t *testing.T) {
	b := redisBackend(t, "")
	faults := redistest.NewFaults(t, 5)
	const ttl = 2 * time.Second
	start := func(grace, script string) (*invocation, string) {
		key := testKey(t)
		ready := filepath.Join(t.TempDir(), "ready")
		inv := newInvocation(t, nil, append(append([]string{"run"}, b.flags()...),
			"--key", key, "--ttl", ttl.String(), "--grace", grace, "--", "sh", "-c", script, ready)...).startIn(t)
		inv.waitFile(t, ready)
		return inv, key
	}
	dies, _ := start("30s", `touch "$0"; exec sleep 60`)
	ignores, _ := start("500ms", `trap '' TERM; touch "$0"; exec sleep 60`) // sleep inherits the ignored TERM
	hung := time.Now()                                                      // the last extensions were before this
	for i := range 3 {
		faults.Hang(t, i)
	}
	t.Cleanup(func() {
		for i := range 3 {
			faults.Restart(t, i)
		}
	})
	for _, c := range []struct {
		inv   *invocation
		by    time.Duration
		tells []string
	}{
		{dies, ttl, []string{"lost the lock", "lost while kept alive", "nodes unavailable", "stopping sh (SIGTERM, then SIGKILL after 30s)"}},
		{ignores, ttl + 500*time.Millisecond, []string{"lost the lock", "still runs 500ms after SIGTERM: killing it"}},
	} {
		r := c.inv.wait(t, 15*time.Second)
		r.want(t, exitLost)
		// Validity ends within ttl of the last extension, CMD is
		// signalled then, and distlock exits as soon as CMD has.
		stopped := time.Since(hung)
		t.Logf("stopped %v after the nodes hung: %q", stopped, r.stderr)
		if stopped > c.by+1500*time.Millisecond {
			t.Errorf("distlock stopped CMD %v after the nodes hung; want by %v, and a margin", stopped, c.by)
		}
		for _, want := range c.tells {
			if !strings.Contains(r.stderr, want) || r.stdout != "" {
				t.Errorf("stderr %q should say %q; stdout %q", r.stderr, want, r.stdout)
			}
		}
	}
}

// TestRun_signalsReachCMD: SIGTERM and SIGINT sent to distlock go to CMD,
// which ends as it chooses (a trap that writes a marker and exits 0, or
// death by SIGINT: 130); distlock exits with that code, and the key is
// free afterwards.
func TestRun_signalsReachCMD(t *testing.T) {
	b := pgBackend(t)
	c := b.client(t)
	cases := map[string]struct {
		sig    syscall.Signal
		script string
		code   int
	}{
		"SIGTERM/trapped": {syscall.SIGTERM, `trap 'echo got-term > "$0"; exit 0' TERM; touch "$1"; while :; do sleep 0.05; done`, 0},
		"SIGINT/default":  {syscall.SIGINT, `touch "$1"; exec sleep 30`, 128 + int(syscall.SIGINT)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			key := testKey(t)
			dir := t.TempDir()
			marker, ready := filepath.Join(dir, "marker"), filepath.Join(dir, "ready")
			inv := newInvocation(t, nil, append(append([]string{"run"}, b.flags()...),
				"--key", key, "--", "sh", "-c", tc.script, marker, ready)...).startIn(t)
			inv.waitFile(t, ready)
			inv.cmd.Process.Signal(tc.sig)
			r := inv.wait(t, 10*time.Second)
			r.want(t, tc.code)
			if got, _ := os.ReadFile(marker); tc.code == 0 && string(got) != "got-term\n" {
				t.Errorf("CMD's trap wrote %q: the SIGTERM did not reach it", got)
			}
			if r.stdout != "" || r.stderr != "" {
				t.Errorf("distlock printed %q, %q", r.stdout, r.stderr)
			}
			mustBeFree(t, c, key)
		})
	}
}

// TestRun_cmdThatCannotRun: a CMD that is not found exits 127 without
// touching the backend (the DSN points nowhere).
func TestRun_cmdThatCannotRun(t *testing.T) {
	r := runDistlock(t, nil, "run", "--driver", "postgres", "--dsn", "postgres://127.0.0.1:1/x", "--key", "k", "--", "no-such-command-here")
	r.want(t, exitNotFound)
	if !strings.Contains(r.stderr, "no-such-command-here") {
		t.Errorf("stderr %q should name the command", r.stderr)
	}
}
