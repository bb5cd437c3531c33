package mysql_test

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
)

// ownServerDB is the database a server of the test's own holds for the
// driver's table.
const ownServerDB = "distlock"

// startOwnServer starts a MariaDB of the test's own, with the server
// options args (such as "--log-bin"), and returns the DSN of its root
// account on its database ownServerDB. Its data is under t.TempDir(), made
// by mariadb-install-db, and it listens on a Unix socket there and on no
// TCP port, so it never meets another server. It runs with --no-defaults,
// as scripts/services.d/mysql.sh runs the shared one, so no system my.cnf
// applies. It is stopped by its PID when the test ends. The test is
// skipped without mariadbd and mariadb-install-db (Debian's
// mariadb-server, which scripts/services.sh installs).
func startOwnServer(t *testing.T, args ...string) string {
	t.Helper()
	mariadbd := lookBinary(t, "mariadbd", "/usr/sbin/mariadbd")
	installDB := lookBinary(t, "mariadb-install-db", "/usr/bin/mariadb-install-db")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	sock := filepath.Join(dir, "mariadbd.sock")
	if len(sock) >= 100 { // sun_path holds 108 bytes
		t.Fatalf("the socket path %s is too long for a Unix socket: set TMPDIR to a shorter dir", sock)
	}
	// A smaller redo log and buffer pool than the defaults make a faster
	// start; the install must make the log the server expects, or the
	// server resizes it at start (3s).
	small := []string{"--innodb-log-file-size=8M", "--innodb-buffer-pool-size=16M"}
	install := exec.Command(installDB, append([]string{"--no-defaults", "--user=root", "--datadir=" + data,
		"--auth-root-authentication-method=normal", "--skip-test-db"}, small...)...)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}

	logPath := filepath.Join(dir, "mariadbd.log")
	cmd := exec.Command(mariadbd, append(append([]string{"--no-defaults", "--user=root",
		"--datadir=" + data, "--skip-networking", "--socket=" + sock,
		"--pid-file=" + filepath.Join(dir, "mariadbd.pid"), "--log-error=" + logPath,
		"--skip-name-resolve"}, small...), args...)...)
	cmd.Dir = data
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", mariadbd, err)
	}
	exited := drivertest.StopAtEnd(t, cmd, syscall.SIGTERM, 10*time.Second) // a clean shutdown

	dsn := "root@unix(" + sock + ")/"
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err = db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+ownServerDB)
		cancel()
		if err == nil {
			return dsn + ownServerDB
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(logPath)
			t.Fatalf("mariadbd (pid %d) exited before it answered: %v; its log:\n%s", cmd.Process.Pid, cmd.ProcessState, b)
		default:
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logPath)
			t.Fatalf("mariadbd (pid %d) did not answer within 30s: %v; its log:\n%s", cmd.Process.Pid, err, b)
		}
	}
}

// lookBinary returns the path of the program name, found in $PATH or at
// fallback (/usr/sbin is not in every $PATH), skipping the test without
// it.
func lookBinary(t *testing.T, name, fallback string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if _, err := os.Stat(fallback); err == nil {
		return fallback
	}
	t.Skipf("no %s in $PATH or at %s: install Debian's mariadb-server (scripts/services.sh up does)", name, fallback)
	return ""
}
