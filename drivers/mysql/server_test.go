package mysql_test

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
)

// mariadb returns the test server as a one-member cluster, to hang with
// SIGSTOP, kill with SIGKILL and start again with its data, through the
// launcher that scripts/services.d/mysql.sh wrote. It skips the test
// without it.
func mariadb(t testing.TB) *drivertest.Members {
	t.Helper()
	dsn := server(t)
	pidFile := drivertest.Lookup(t, "DISTLOCK_MYSQL_PID_FILE")
	start := drivertest.Lookup(t, "DISTLOCK_MYSQL_START")
	dir := filepath.Dir(pidFile)
	return drivertest.NewMembers(drivertest.MembersConfig{
		Name:    "mariadbd",
		Dirs:    []string{filepath.Join(dir, "data")}, // its cwd
		Addrs:   []string{config(t, dsn).Addr},
		PIDFile: filepath.Join("..", filepath.Base(pidFile)),
		Start:   func(string) *exec.Cmd { return exec.Command(start) },
		Ready:   func(t *testing.T, _ int) { waitServing(t, dsn) },
	})
}

// waitServing waits until the server at dsn answers a query, for up to
// 30s.
func waitServing(t testing.TB, dsn string) {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := db.QueryRowContext(ctx, "SELECT 1").Scan(new(int))
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server does not answer 30s after it was started: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ours reports whether the test server's PID file is there, as it is for
// the server scripts/services.sh started.
func ours(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(drivertest.Lookup(t, "DISTLOCK_MYSQL_PID_FILE")); err != nil {
		t.Skipf("the test server's PID file: %v", err)
	}
}
