package main

import (
	"context"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/distlock/lock/internal/testenv"
)

// pgScratchTables returns the scratch tables of verify runs on the test
// PostgreSQL server.
func pgScratchTables(t *testing.T, conn *pgx.Conn) []string {
	t.Helper()
	rows, err := conn.Query(t.Context(), `SELECT tablename FROM pg_tables WHERE tablename LIKE 'distlock\_verify\_%' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// startContending starts a long verify run on b and returns it with its
// scratch table, once its workers contend in it (its alive lock is held
// from before they start).
func startContending(t *testing.T, conn *pgx.Conn, b backendCase) (*invocation, string) {
	t.Helper()
	before := pgScratchTables(t, conn)
	inv := newInvocation(t, nil, append(append([]string{"verify"}, b.flags()...), "--duration", "60s", "--ttl", "1s", "--workers", "2")...).startIn(t)
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		for _, name := range pgScratchTables(t, conn) {
			if slices.Contains(before, name) {
				continue
			}
			var n int
			err := conn.QueryRow(t.Context(), `SELECT count(*) FROM `+pgx.Identifier{name}.Sanitize()+` WHERE key LIKE 'procs/%'`).Scan(&n)
			if err == nil && n > 0 {
				return inv, name
			}
		}
		if time.Now().After(deadline) {
			inv.cmd.Process.Kill()
			t.Fatalf("no worker of the run contended within 15s; stderr: %s", inv.stderr.String())
		}
	}
}

// A run killed by SIGKILL cannot drop its scratch namespace. The next run
// drops it, once --sweep-after has passed since it began, and leaves
// alone the namespace of a run that still lives.
func TestVerify_nextRunSweepsAKilledRun(t *testing.T) {
	b := pgBackend(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, testenv.PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	killed, killedTable := startContending(t, conn, b)
	killed.cmd.Process.Signal(syscall.SIGKILL) // its workers die with it (their parent-death signal)
	killed.wait(t, 10*time.Second)
	if !slices.Contains(pgScratchTables(t, conn), killedTable) {
		t.Fatalf("the killed run's table %s is gone before any sweep: the test shows nothing", killedTable)
	}
	// Its alive lock ends a TTL after its last extension.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var alive bool
		err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+pgx.Identifier{killedTable}.Sanitize()+` WHERE key = $1 AND expires_at > clock_timestamp())`, aliveKey).Scan(&alive)
		if err != nil {
			t.Fatal(err)
		}
		if !alive {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed run's alive lock %s is still held 5s later", aliveKey)
		}
	}
	living, livingTable := startContending(t, conn, b)
	defer func() { // the living run, interrupted, drops its own
		living.cmd.Process.Signal(syscall.SIGINT)
		living.wait(t, 20*time.Second).want(t, exitInterrupted)
		if slices.Contains(pgScratchTables(t, conn), livingTable) {
			t.Errorf("the interrupted run left its table %s", livingTable)
			dropLeftTable(t, contentionJSON{Run: runJSON{Namespace: "table " + livingTable}})
		}
	}()

	r := runDistlock(t, nil, append(append([]string{"verify"}, b.flags()...), "--duration", "2s", "--ttl", "500ms", "--json", "--sweep-after", "0s")...)
	out := verifyOutput(t, r)
	dropLeftTable(t, out)
	t.Logf("swept %v; sweep error %q", out.Run.Swept, out.Run.SweepError)
	r.want(t, exitOK)
	tables := pgScratchTables(t, conn)
	if slices.Contains(tables, killedTable) || !slices.Contains(out.Run.Swept, "table "+killedTable) {
		t.Errorf("the killed run's table %s was not swept: swept %v, tables now %v", killedTable, out.Run.Swept, tables)
	}
	if !slices.Contains(tables, livingTable) || slices.ContainsFunc(out.Run.Swept, func(s string) bool { return strings.HasSuffix(s, livingTable) }) {
		t.Errorf("the living run's table %s was swept: tables now %v", livingTable, tables)
	}
	if out.Run.SweepError != "" {
		t.Errorf("sweep error: %s", out.Run.SweepError)
	}
}
