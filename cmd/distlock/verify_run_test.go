package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/internal/testenv"
)

// verifyShort are the flags of a short contention run: a few seconds,
// with a TTL of a second so that the nemesis pauses a holder or two.
var verifyShort = []string{"--duration", "5s", "--ttl", "1s", "--workers", "3", "--json"}

// verifyOutput is what verify --json printed, and its exit code.
func verifyOutput(t *testing.T, r runResult) contentionJSON {
	t.Helper()
	var out contentionJSON
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("verify --json printed %q (exit %d, stderr %q): %v", r.stdout, r.code, r.stderr, err)
	}
	return out
}

// dropLeftTable drops the scratch table a PostgreSQL run left, where the
// driver could not drop it, so that the test server does not gather them.
func dropLeftTable(t *testing.T, out contentionJSON) {
	t.Helper()
	name, ok := strings.CutPrefix(out.Run.Namespace, "table ")
	if out.Run.Dropped || !ok || !regexp.MustCompile(`^distlock_verify_[0-9a-f]+_[0-9a-f]+$`).MatchString(name) {
		return
	}
	t.Logf("the driver left %s: dropped by the test", out.Run.Namespace)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, testenv.PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP TABLE IF EXISTS "+name); err != nil {
		t.Fatal(err)
	}
}

// dropLeftKeys deletes the keys a Redis run left under its prefix (its
// fencing counters never expire), where the driver could not drop them.
func dropLeftKeys(t *testing.T, namespace string) {
	t.Helper()
	prefix, ok := strings.CutPrefix(namespace, "key prefix ")
	if !ok || !regexp.MustCompile(`^distlock-verify/[0-9a-f]+_[0-9a-f]+/$`).MatchString(prefix) {
		return
	}
	for _, addr := range testenv.RedisAddrs(t) {
		c := redis.NewClient(&redis.Options{Addr: addr})
		for k := range scratchKeys(t, c, prefix+"*") {
			c.Del(t.Context(), k)
		}
		c.Close()
	}
}

// verify passes on PostgreSQL and on Redlock over goredis (with fencing)
// in a short run of the distlock binary, as users run it: no overlap,
// no token regression, no lost write, no lock left a TTL later.
func TestVerify_contentionPassesOnTheTestServers(t *testing.T) {
	for _, b := range []backendCase{pgBackend(t), redisBackend(t, "&fencing=true")} {
		t.Run(b.name, func(t *testing.T) {
			r := runDistlock(t, nil, append(append([]string{"verify"}, b.flags()...), verifyShort...)...)
			out := verifyOutput(t, r)
			if !out.Run.Dropped {
				dropLeftTable(t, out)
				dropLeftKeys(t, out.Run.Namespace)
			}
			t.Logf("%s: %s", b.name, runSummary(out.Run))
			r.want(t, exitOK)
			run := out.Run
			if !out.OK || run.Holdings == 0 || run.Overlaps+run.TokenRegressions+run.LostWrites+run.LeftAfterTTL != 0 {
				t.Errorf("run: %+v", run)
			}
			if run.Fenced != b.fenced || !run.LeftoversCounted || run.Faults["pause-holder"] == 0 {
				t.Errorf("fenced %v (want %v), leftovers counted %v, pauses %d: %+v", run.Fenced, b.fenced, run.LeftoversCounted, run.Faults["pause-holder"], run)
			}
			// The nemesis deals the connection faults first (see procs.Nemesis).
			if !run.NetFaults || run.Faults["reset-connections"]+run.Faults["slow-connections"] == 0 {
				t.Errorf("connection faults: the driver takes verify's dialer: %v; dealt: %v", run.NetFaults, run.Faults)
			}
			if !run.Dropped && !strings.Contains(run.Left, "expire") {
				t.Errorf("neither dropped nor said what is left: %+v", run)
			}
		})
	}
}

// verify fails (1) against conformance.ShortLease, whose leases are a
// twentieth of the TTL the client believes: a holder paused past its
// lease overlaps the next, and the offending pairs are named. The
// workers are this test binary (TestMain), made unsafe by the
// environment.
func TestVerify_contentionCatchesShortLease(t *testing.T) {
	b := pgBackend(t)
	t.Setenv(envTestShortLease, "20")
	// Only a pause catches the short lease, and the nemesis deals it after
	// the connection faults (whose cards come back while the workers are
	// still starting): 8s leave room for it on a loaded machine, where 4s
	// once dealt one connection fault and no pause (make test).
	long := slices.Clone(verifyShort)
	long[slices.Index(long, "--duration")+1] = "8s"
	r := cliResult(t, append(append([]string{"verify"}, b.flags()...), long...)...)
	out := verifyOutput(t, r)
	dropLeftTable(t, out)
	r.want(t, exitUnsafe)
	run := out.Run
	t.Log(runSummary(run))
	if out.OK || run.Overlaps == 0 || len(run.Pairs) == 0 {
		t.Fatalf("the unsafe variant was not caught: %+v", run)
	}
	// The pairs kept may begin with a token regression, which a paused
	// holder of a short lease can also cause (make test, once): the
	// first overlap among them must name two workers.
	i := slices.IndexFunc(run.Pairs, func(p pairJSON) bool { return p.Kind == "overlap" })
	if i < 0 {
		t.Fatalf("%d overlaps counted, none among the %d pairs kept: %+v", run.Overlaps, len(run.Pairs), run.Pairs)
	}
	if p := run.Pairs[i]; p.Key == "" || p.First.Worker == p.Second.Worker || p.Second.FromS >= p.First.ToS {
		t.Errorf("first overlap %+v is no overlap of two workers", p)
	}
	text := cliResult(t, append(append([]string{"verify"}, b.flags()...), long[:len(long)-1]...)...)
	dropLeftTable(t, contentionJSON{Run: runJSON{Namespace: scratchName(text.stdout), Dropped: strings.Contains(text.stdout, " dropped\n")}})
	text.want(t, exitUnsafe)
	t.Logf("the table:\n%s", text.stdout)
	if !strings.Contains(text.stdout, "offending pairs") || !strings.Contains(text.stdout, ": overlap: worker ") || !strings.Contains(text.stdout, "FAIL: ") {
		t.Errorf("the table names no offending pair:\n%s", text.stdout)
	}
}

// runSummary is a run's figures in a line, without its pairs.
func runSummary(r runJSON) string {
	return fmt.Sprintf("%d holdings, %d failed; %d overlaps (%d pairs kept), %d regressions (fenced %v), %d of %d writes lost; longest with no holder %.3fs; left %d, %d a TTL later; faults %v; %s",
		r.Holdings, r.FailedAttempts, r.Overlaps, len(r.Pairs), r.TokenRegressions, r.Fenced, r.LostWrites, r.Writes, r.LongestNoHolderS, r.LeftAtEnd, r.LeftAfterTTL, r.Faults, cmp.Or(r.Left, r.Namespace+" dropped"))
}

// scratchName returns the scratch namespace that verify's table names.
func scratchName(stdout string) string {
	m := regexp.MustCompile(`scratch namespace: (.*)\n`).FindStringSubmatch(stdout)
	if m == nil {
		return ""
	}
	return m[1]
}

// A SIGINT in the middle of a run stops it (130): the workers are
// stopped, and the scratch namespace is dropped, so that nothing of it is
// left in the backend. A driver that cannot drop it says what stays.
func TestVerify_interruptedRunLeavesNothing(t *testing.T) {
	b := redisBackend(t, "&fencing=true")
	rdb := redis.NewClient(&redis.Options{Addr: testenv.RedisAddrs(t)[0]})
	defer rdb.Close()
	before := scratchKeys(t, rdb, "distlock-verify/*")
	inv := newInvocation(t, nil, append(append([]string{"verify"}, b.flags()...), "--duration", "30s", "--ttl", "1s", "--workers", "3")...).startIn(t)
	deadline := time.Now().Add(15 * time.Second)
	var prefix string
	workersKey := regexp.MustCompile(`^(distlock-verify/[0-9a-f]+_[0-9a-f]+/).*procs/`)
	for prefix == "" { // the workers are contending once their keys show (a fencing counter stays)
		for k := range scratchKeys(t, rdb, "distlock-verify/*") {
			if m := workersKey.FindStringSubmatch(k); m != nil && !before[k] {
				prefix = m[1]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no key of the run showed within 15s; stderr: %s", inv.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	inv.cmd.Process.Signal(syscall.SIGINT)
	r := inv.wait(t, 20*time.Second)
	r.want(t, exitInterrupted)
	if !strings.Contains(r.stderr, "interrupted") {
		t.Errorf("stderr %q does not say it was interrupted", r.stderr)
	}
	if !dropsNamespaces(t, "goredis", b.dsn) {
		if !strings.Contains(r.stderr, "stays") || !strings.Contains(r.stderr, "expire") {
			t.Errorf("the driver cannot drop its namespace, and stderr %q does not say what stays", r.stderr)
		}
		t.Logf("goredis cannot drop a namespace yet: %s", r.stderr)
		dropLeftKeys(t, "key prefix "+prefix)
		return
	}
	if !strings.Contains(r.stderr, "dropped") {
		t.Errorf("stderr %q does not say the namespace was dropped", r.stderr)
	}
	for _, addr := range testenv.RedisAddrs(t) {
		c := redis.NewClient(&redis.Options{Addr: addr})
		if left := scratchKeys(t, c, prefix+"*"); len(left) > 0 {
			t.Errorf("%s: keys of the interrupted run left: %v", addr, left)
		}
		c.Close()
	}
}

// scratchKeys returns the keys of rdb that match pattern.
func scratchKeys(t *testing.T, rdb *redis.Client, pattern string) map[string]bool {
	t.Helper()
	keys := make(map[string]bool)
	iter := rdb.Scan(t.Context(), 0, pattern, 1000).Iterator()
	for iter.Next(t.Context()) {
		keys[iter.Val()] = true
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

// dropsNamespaces reports whether driver d's connections can drop their
// namespace (driver.Dropper).
func dropsNamespaces(t *testing.T, d, dsn string) bool {
	t.Helper()
	c, err := lock.NewConnector(d, dsn)
	if err != nil {
		t.Fatal(err)
	}
	cn, err := c.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer cn.Close()
	_, ok := cn.(driver.Dropper)
	return ok
}
