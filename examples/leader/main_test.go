package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock/internal/redistest"
	"github.com/distlock/lock/internal/testenv"
)

// The Redis case talks to every test server: it holds them exclusively,
// as the Redis drivers' fault tests do.
func TestMain(m *testing.M) { testenv.Main(m, testenv.Redis, testenv.Postgres) }

// termLine matches the line that starts a term.
var termLine = regexp.MustCompile(`term (\d+): candidate (\d+) leads \(token (\d+)\)`)

// TestRun_leadershipMoves runs an election of five candidates over four
// terms on each backend it names: each term has a new leader with a newer
// token, odd terms end in a crash and even ones in a step-down.
func TestRun_leadershipMoves(t *testing.T) {
	for _, tc := range []struct {
		driver string
		dsn    func(t *testing.T) string
	}{
		{"memory", func(*testing.T) string { return "leader-test" }},
		{"goredis", func(t *testing.T) string { return redistest.DSN(testenv.RedisAddrs(t), "fencing=true") }},
		{"postgres", func(t *testing.T) string { return testenv.PostgresDSN(t) }},
	} {
		t.Run(tc.driver, func(t *testing.T) {
			dsn := tc.dsn(t)
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cfg := config{Key: "leader-test/" + randomSuffix(), Candidates: 5, Terms: 4, TTL: 300 * time.Millisecond}
			var out bytes.Buffer
			if err := run(ctx, &out, tc.driver, dsn, cfg); err != nil {
				t.Fatalf("run: %v\n%s", err, &out)
			}
			checkTerms(t, out.String(), cfg.Terms)
		})
	}
}

// checkTerms checks that out shows terms 1 to n in order, each with a new
// leader and a greater token, and ending as the program says it ends.
func checkTerms(t *testing.T, out string, n int) {
	t.Helper()
	terms := termLine.FindAllStringSubmatch(out, -1)
	if len(terms) != n {
		t.Fatalf("%d terms started, want %d:\n%s", len(terms), n, out)
	}
	prevLeader, prevToken := "", uint64(0)
	for i, m := range terms {
		token, _ := strconv.ParseUint(m[3], 10, 64)
		if m[1] != strconv.Itoa(i+1) || m[2] == prevLeader || token <= prevToken {
			t.Errorf("term %d: %q follows leader %s, token %d:\n%s", i+1, m[0], prevLeader, prevToken, out)
		}
		prevLeader, prevToken = m[2], token
		end := fmt.Sprintf("term %d: candidate %s's term ends", i+1, m[2])
		if i%2 == 0 {
			end = fmt.Sprintf("term %d: candidate %s crashes", i+1, m[2])
		}
		if !strings.Contains(out, end) {
			t.Errorf("output lacks %q:\n%s", end, out)
		}
	}
	if !strings.HasSuffix(out, "every candidate stops campaigning\n") {
		t.Errorf("output does not end with the candidates stopping:\n%s", out)
	}
}

// randomSuffix returns 8 random hex digits, for a key of the test's own.
func randomSuffix() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// TestRun_tooFewCandidates refuses a schedule that would crash every
// candidate before its last term.
func TestRun_tooFewCandidates(t *testing.T) {
	err := run(t.Context(), &bytes.Buffer{}, "memory", "leader-test", config{Key: "k", Candidates: 2, Terms: 3, TTL: time.Second})
	if err == nil {
		t.Fatal("run accepted 3 terms (2 crashes) with 2 candidates")
	}
}
