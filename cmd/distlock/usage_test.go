package main

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
)

// These tests call the command's entry point in the test's process: bad
// usage is refused before any backend is contacted.

// cliResult runs the command line args in this process.
func cliResult(t *testing.T, args ...string) runResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli(t.Context(), args, &stdout, &stderr)
	return runResult{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

func TestUsage_badUsageExits64WithOneLine(t *testing.T) {
	t.Setenv("DISTLOCK_DRIVER", "")
	t.Setenv("DISTLOCK_DSN", "")
	mem := []string{"--driver", "memory", "--dsn", "usage-test"}
	cases := map[string][]string{
		"run/noKey":           append([]string{"run"}, append(mem, "--", "true")...),
		"run/noCMD":           append([]string{"run"}, append(mem, "--key", "k")...),
		"run/noDriver":        {"run", "--key", "k", "--", "true"},
		"run/unknownDriver":   {"run", "--driver", "nosuch", "--key", "k", "--", "true"},
		"run/badDSN":          {"run", "--driver", "goredis", "--dsn", "http://x", "--key", "k", "--", "true"},
		"run/waitAndNoWait":   append([]string{"run"}, append(mem, "--key", "k", "--wait", "1s", "--no-wait", "--", "true")...),
		"run/zeroWait":        append([]string{"run"}, append(mem, "--key", "k", "--wait", "0s", "--", "true")...),
		"run/shortTTL":        append([]string{"run"}, append(mem, "--key", "k", "--ttl", "1ms", "--", "true")...),
		"run/negativeGrace":   append([]string{"run"}, append(mem, "--key", "k", "--grace", "-1s", "--", "true")...),
		"run/badDuration":     append([]string{"run"}, append(mem, "--key", "k", "--ttl", "soon", "--", "true")...),
		"run/unknownFlag":     append([]string{"run"}, append(mem, "--key", "k", "--frobnicate", "--", "true")...),
		"run/invalidKey":      append([]string{"run"}, append(mem, "--key", "bad\x00key", "--", "true")...),
		"status/noKeys":       append([]string{"status"}, mem...),
		"status/unknownFlag":  append([]string{"status"}, append(mem, "--frobnicate", "k")...),
		"status/zeroTimeout":  append([]string{"status"}, append(mem, "--timeout", "0s", "k")...),
		"status/invalidKey":   append([]string{"status"}, append(mem, "ok", "bad\x00key")...),
		"status/noDriver":     {"status", "k"},
		"unknownCommand":      {"frobnicate"},
		"verify/memory":       append([]string{"verify"}, mem...),
		"verify/argument":     append([]string{"verify", "--lint-only"}, append(mem, "extra")...),
		"verify/zeroTimeout":  append([]string{"verify", "--lint-only", "--timeout", "0s"}, mem...),
		"verify/noDriver":     {"verify", "--lint-only"},
		"verify/shortRun":     append([]string{"verify", "--duration", "1s", "--ttl", "1s"}, mem...),
		"verify/oneWorker":    append([]string{"verify", "--workers", "1"}, mem...),
		"status/badDSNDriver": {"status", "--driver", "postgres", "--dsn", "postgres://h/db?distlock_table=no-such-table!", "k"},
		"bench/dsnMissing":    {"bench", "--driver", "memory", "--driver", "postgres"},
		"bench/retiredFlag":   {"bench", "--drivers", "memory"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			r := cliResult(t, args...)
			if r.code != exitUsage {
				t.Fatalf("exit code %d, want %d; stderr %q", r.code, exitUsage, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q, want nothing", r.stdout)
			}
			if name != "unknownCommand" && (!strings.HasPrefix(r.stderr, "distlock: ") || strings.Count(r.stderr, "\n") != 1) {
				t.Errorf("stderr %q, want one line starting with \"distlock: \"", r.stderr)
			}
		})
	}
}

// A DSN given where the driver's name goes is not printed back: it may
// hold a password. Each command says it looks like a DSN instead.
func TestUsage_dsnAsDriverIsNotPrinted(t *testing.T) {
	const secret = "s3cret-in-the-dsn"
	dsn := "postgres://app:" + secret + "@db.example:5432/locks"
	for _, args := range [][]string{
		{"run", "--driver", dsn, "--key", "k", "--", "true"},
		{"status", "--driver", dsn, "k"},
		{"verify", "--lint-only", "--driver", dsn},
		{"bench", "--driver", dsn},
	} {
		t.Run(args[0], func(t *testing.T) {
			r := cliResult(t, args...)
			if r.code != exitUsage || strings.Contains(r.stderr+r.stdout, secret) || !strings.Contains(r.stderr, "a DSN?") {
				t.Errorf("exit %d, stderr %q; want %d, a word on the DSN, and no password", r.code, r.stderr, exitUsage)
			}
		})
	}
}

func TestUsage_helpPrintsFlagsAndExamples(t *testing.T) {
	for _, c := range []struct{ cmd, flag string }{{"run", "-no-wait"}, {"status", "-json"}, {"verify", "-lint-only"}, {"bench", "-no-hung"}} {
		for _, help := range []string{"--help", "-h"} {
			r := cliResult(t, c.cmd, help)
			if r.code != 0 || r.stderr != "" {
				t.Errorf("%s %s: exit %d, stderr %q", c.cmd, help, r.code, r.stderr)
			}
			for _, want := range []string{"Usage: distlock " + c.cmd, c.flag, "-driver", "$DISTLOCK_DSN", "Examples:\n  distlock " + c.cmd} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("%s %s does not show %q:\n%s", c.cmd, help, want, r.stdout)
				}
			}
		}
	}
}

// TestStatus_driverWithoutInspector: a driver that cannot tell who holds
// a key is an error (69) that says so, not an empty answer.
func TestStatus_driverWithoutInspector(t *testing.T) {
	r := cliResult(t, "status", "--driver", blindDriverName, "--dsn", "", "k")
	if r.code != exitBackend || r.stdout != "" || !strings.Contains(r.stderr, "cannot tell who holds a key") {
		t.Errorf("status on a driver without an inspector: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestStatus_memory: status answers on the memory driver too (in this
// process only, since the store is the process's).
func TestStatus_memory(t *testing.T) {
	c, err := lock.Open("memory", "status-test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l, err := c.TryAcquire(t.Context(), "held key", lock.WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(context.Background())
	r := cliResult(t, "status", "--driver", "memory", "--dsn", "status-test", "held key", "free")
	lines := strings.Split(r.stdout, "\n")
	if r.code != 0 || len(lines) != 4 || !strings.HasPrefix(lines[1], `"held key"  `+l.ID()) || !strings.HasPrefix(lines[2], "free ") {
		t.Errorf("status: exit %d, stdout:\n%s\nstderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestParseInterleaved_flagsAfterKeys(t *testing.T) {
	cases := []struct {
		args []string
		keys []string
		json bool
	}{
		{[]string{"a", "--json", "b"}, []string{"a", "b"}, true},
		{[]string{"--json", "a"}, []string{"a"}, true},
		{[]string{"a", "--", "--json"}, []string{"a", "--json"}, false},
		{[]string{"a", "b"}, []string{"a", "b"}, false},
	}
	for _, c := range cases {
		o, err := parseStatus(append([]string{"--driver", "memory"}, c.args...), &bytes.Buffer{})
		if err != nil || !slices.Equal(o.keys, c.keys) || o.json != c.json {
			t.Errorf("parseStatus(%q) = %+v, %v; want keys %q, json %v", c.args, o, err, c.keys, c.json)
		}
	}
}

func TestChildEnv_replacesInheritedLockVariables(t *testing.T) {
	c, err := lock.Open("memory", "env-test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l, err := c.TryAcquire(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(context.Background())
	env := childEnv([]string{"A=1", "DISTLOCK_TOKEN=99", "DISTLOCK_KEY=outer", "DISTLOCK_LOCK_ID=outer", "DISTLOCK_DSN=x"}, l)
	tok, _ := l.Token()
	want := []string{"A=1", "DISTLOCK_DSN=x", "DISTLOCK_KEY=k", "DISTLOCK_LOCK_ID=" + l.ID(), "DISTLOCK_TOKEN=" + tok.String()}
	if !slices.Equal(env, want) {
		t.Errorf("childEnv = %q, want %q", env, want)
	}
}

func TestPrintable_quotesWhatWouldBreakTheTable(t *testing.T) {
	for in, want := range map[string]string{
		"plain/key:1": "plain/key:1",
		"two words":   `"two words"`,
		"tab\there":   `"tab\there"`,
		"esc\x1b[31m": `"esc\x1b[31m"`,
		`"quoted"`:    `"\"quoted\""`,
		"":            `""`,
		"ключ":        "ключ",
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %s, want %s", in, got, want)
		}
	}
}

// blindDriverName is a driver registered by the tests that has no
// driver.Inspector: no driver of the module lacks one any more.
const blindDriverName = "cmd-distlock-test-blind"

func init() { lock.Register(blindDriverName, blindDriver{}) }

type blindDriver struct{}

func (blindDriver) OpenConnector(string) (driver.Connector, error) { return blindDriver{}, nil }
func (blindDriver) Connect(context.Context) (driver.Conn, error)   { return blindConn{}, nil }

// blindConn holds nothing and cannot tell who holds what.
type blindConn struct{}

func (blindConn) Acquire(context.Context, string, string, time.Duration) (driver.Lease, error) {
	return driver.Lease{}, errors.New("blind driver")
}
func (blindConn) Release(context.Context, string, string) error { return driver.ErrNotHeld }
func (blindConn) Close() error                                  { return nil }
