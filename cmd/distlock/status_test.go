package main

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
)

// TestStatus_heldAndFreeKeys: the table and the JSON show a held key's
// holder ID, token and time left, and a free key as free, over
// PostgreSQL; flags may follow the keys.
func TestStatus_heldAndFreeKeys(t *testing.T) {
	b := pgBackend(t)
	c := b.client(t)
	held, free := testKey(t), testKey(t)
	l, err := c.TryAcquire(t.Context(), held, lock.WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Release(t.Context()) })
	tok, _ := l.Token()

	r := runDistlock(t, nil, append(append([]string{"status"}, b.flags()...), held, free)...)
	r.want(t, 0)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "KEY HOLDER TOKEN EXPIRES IN" {
		t.Fatalf("status printed %q; want a header and two rows", r.stdout)
	}
	row := strings.Fields(lines[1])
	if len(row) != 4 || row[0] != held || row[1] != l.ID() || row[2] != tok.String() {
		t.Errorf("held key's row %q; want %s %s %s and the time left", lines[1], held, l.ID(), tok)
	} else if left, err := time.ParseDuration(row[3]); err != nil || left <= 50*time.Second || left > time.Minute {
		t.Errorf("held key expires in %q; want just under a minute", row[3])
	}
	if got := strings.Fields(lines[2]); strings.Join(got, " ") != free+" (free) - -" {
		t.Errorf("free key's row %q", lines[2])
	}
	if col := strings.Index(lines[0], "HOLDER"); strings.Index(lines[1], l.ID()) != col || strings.Index(lines[2], "(free)") != col {
		t.Errorf("columns are not aligned:\n%s", r.stdout)
	}

	r = runDistlock(t, nil, append(append([]string{"status"}, b.flags()...), held, free, "--json")...)
	r.want(t, 0)
	var got []keyStatus
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got) != 2 {
		t.Fatalf("--json printed %q (%v); want an array of two objects", r.stdout, err)
	}
	h, f := got[0], got[1]
	if h.Key != held || !h.Held || h.Holder != l.ID() || h.Token == nil || *h.Token != uint64(tok) ||
		h.ExpiresInMS == nil || *h.ExpiresInMS <= 50_000 || *h.ExpiresInMS > 60_000 {
		t.Errorf("held key's object: %s", r.stdout)
	}
	if f.Key != free || f.Held || f.Holder != "" || f.Token != nil || f.ExpiresInMS != nil {
		t.Errorf("free key's object: %s", r.stdout)
	}
	if r.stderr != "" {
		t.Errorf("stderr: %q", r.stderr)
	}
}

// TestStatus_redlock: over Redlock (now an inspector), status shows the
// holder and token that a run's CMD sees.
func TestStatus_redlock(t *testing.T) {
	b := redisBackend(t, "&fencing=true")
	key := testKey(t)
	holder := holdKey(t, b, key)
	h := waitHeld(t, b.client(t), key)
	r := runDistlock(t, nil, append(append([]string{"status", "--json"}, b.flags()...), key)...)
	r.want(t, 0)
	var got []keyStatus
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got) != 1 ||
		got[0].Holder != h.ID || got[0].Token == nil || strconv.FormatUint(*got[0].Token, 10) != h.Token.String() {
		t.Errorf("status --json printed %q; want holder %s with token %s", r.stdout, h.ID, h.Token)
	}
	holder.stop(t)
}

// TestSecrets_neverPrinted: a DSN's password appears in nothing the
// command prints, whether it succeeds, finds a key held, cannot parse the
// DSN or cannot reach the backend. (The test server uses trust auth, so
// it ignores the password.)
func TestSecrets_neverPrinted(t *testing.T) {
	const secret = "Pa55w0rdNeverShown"
	u, err := url.Parse(pgBackend(t).dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), secret)
	dsn := u.String()
	key := testKey(t)
	holder := holdKey(t, backendCase{driver: "postgres", dsn: dsn}, key)
	defer holder.stop(t)
	unreachable := "postgres://postgres:" + secret + "@127.0.0.1:1/distlock?sslmode=disable&connect_timeout=2"
	malformed := "postgres://postgres:" + secret + "@127.0.0.1:15432/distlock?distlock_nonsense=1"
	for _, args := range [][]string{
		{"status", "--driver", "postgres", "--dsn", dsn, key},
		{"status", "--driver", "postgres", "--dsn", dsn, "--json", key},
		{"status", "--driver", "postgres", "--dsn", unreachable, key},
		{"status", "--driver", "postgres", "--dsn", malformed, key},
		{"status", "--driver", "goredis", "--dsn", "redis://:" + secret + "@127.0.0.1:1?node_timeout=nope", key},
		{"run", "--driver", "postgres", "--dsn", dsn, "--key", key, "--no-wait", "--", "true"},
		{"run", "--driver", "postgres", "--dsn", unreachable, "--key", key, "--", "true"},
		{"run", "--driver", "postgres", "--dsn", malformed, "--key", key, "--", "true"},
		{"run", "--help"},
	} {
		r := runDistlock(t, []string{"DISTLOCK_DSN=" + dsn}, args...)
		if strings.Contains(r.stdout+r.stderr, secret) {
			t.Errorf("distlock %q printed the password:\nstdout: %s\nstderr: %s", args[:2], r.stdout, r.stderr)
		}
		if r.code != 0 && (r.stdout != "" || !strings.HasPrefix(r.stderr, "distlock: ") || strings.Count(r.stderr, "\n") != 1) {
			t.Errorf("distlock %q failed (%d) with stdout %q, stderr %q; want one line on stderr", args, r.code, r.stdout, r.stderr)
		}
	}
}
