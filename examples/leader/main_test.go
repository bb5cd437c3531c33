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
// leader and a greater token, and ending as the program says it ends (see
// termProblems).
func checkTerms(t *testing.T, out string, n int) {
	t.Helper()
	problems, lost := termProblems(out, n)
	for _, p := range problems {
		t.Error(p)
	}
	if len(problems) > 0 {
		t.Logf("output:\n%s", out)
	} else if lost != "" {
		t.Logf("%s:\n%s", lost, out)
	}
}

// termProblems returns what is wrong with out as the output of n terms,
// and a note if a term ended with its lock lost. One term may end so
// instead of as scripted: on a loaded machine an extension of the 300ms
// lease can come back after the lease's validity, and the leader is then
// told that it lost the lock, as the library promises (make test saw it
// once on postgres, 2026-12-07). A second such term is a problem.
func termProblems(out string, n int) (problems []string, lost string) {
	terms := termLine.FindAllStringSubmatch(out, -1)
	if len(terms) != n {
		return []string{fmt.Sprintf("%d terms started, want %d", len(terms), n)}, ""
	}
	prevLeader, prevToken := "", uint64(0)
	for i, m := range terms {
		token, _ := strconv.ParseUint(m[3], 10, 64)
		if m[1] != strconv.Itoa(i+1) || m[2] == prevLeader || token <= prevToken {
			problems = append(problems, fmt.Sprintf("term %d: %q follows leader %s, token %d", i+1, m[0], prevLeader, prevToken))
		}
		prevLeader, prevToken = m[2], token
		end := fmt.Sprintf("term %d: candidate %s's term ends", i+1, m[2])
		if i%2 == 0 {
			end = fmt.Sprintf("term %d: candidate %s crashes", i+1, m[2])
		}
		switch {
		case strings.Contains(out, end):
		case strings.Contains(out, fmt.Sprintf("term %d: candidate %s lost the lock", i+1, m[2])) && lost == "":
			lost = fmt.Sprintf("term %d ended with its lock lost, not as scripted (%q)", i+1, end)
		default:
			problems = append(problems, fmt.Sprintf("output lacks %q", end))
		}
	}
	if !strings.HasSuffix(out, "every candidate stops campaigning\n") {
		problems = append(problems, "output does not end with the candidates stopping")
	}
	return problems, lost
}

// TestTermProblems shows the checker at work: it takes the scripted run
// and one with a term lost, and catches two lost terms, a token that goes
// back, and a missing crash.
func TestTermProblems(t *testing.T) {
	const (
		t1    = "term 1: candidate 2 leads (token 1)\n"
		t2    = "term 2: candidate 4 leads (token 2)\n"
		crash = "term 1: candidate 2 crashes: its client is closed\n"
		ends  = "term 2: candidate 4's term ends after 6 rounds\n"
		lost1 = "term 1: candidate 2 lost the lock: it stops leading\n"
		lost2 = "term 2: candidate 4 lost the lock: it stops leading\n"
		stop  = "the program ends: every candidate stops campaigning\n"
	)
	for _, tc := range []struct {
		name, out string
		ok        bool
	}{
		{"scripted", t1 + crash + t2 + ends + stop, true},
		{"one term lost", t1 + lost1 + t2 + ends + stop, true},
		{"two terms lost", t1 + lost1 + t2 + lost2 + stop, false},
		{"token goes back", t1 + crash + "term 2: candidate 4 leads (token 1)\n" + ends + stop, false},
		{"no crash", t1 + t2 + ends + stop, false},
	} {
		problems, _ := termProblems(tc.out, 2)
		if ok := len(problems) == 0; ok != tc.ok {
			t.Errorf("%s: problems %q, want ok %v", tc.name, problems, tc.ok)
		}
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
