//go:build servers

package postgres_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/distlock/lock/drivertest"
)

// ownServer is a PostgreSQL server of a test's own: a primary, or a
// standby streaming from one. Unlike the shared test server it keeps
// fsync on, and its configuration is the test's to change.
type ownServer struct {
	dsn  string // the superuser's (postgres), database postgres
	port int
	pg   pgTools
}

// pgTools runs PostgreSQL's programs from one bin dir, as the OS user
// scripts/services.sh runs the shared server as: PostgreSQL refuses root.
type pgTools struct {
	bindir string
	cred   *syscall.Credential // nil: run as ourselves
}

// startPrimary initdbs and starts a primary of the test's own on a free
// port of 127.0.0.1, its data under t.TempDir(), with fsync and
// synchronous_commit on, and replication, physical and logical, allowed
// from 127.0.0.1 (trust).
// It is stopped by its PID when the test ends. The test is skipped
// without PostgreSQL's programs (see newPGTools).
func startPrimary(t *testing.T) *ownServer {
	t.Helper()
	pg := newPGTools(t)
	data := pg.dataDir(t, "primary")
	if out, err := pg.command("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	hba := "local all all trust\nhost all all 127.0.0.1/32 trust\nhost replication all 127.0.0.1/32 trust\n"
	if err := os.WriteFile(filepath.Join(data, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		t.Fatal(err)
	}
	// Small, since several tests' servers may run at once on a small machine.
	conf := "fsync = on\nsynchronous_commit = on\nwal_level = logical\nmax_wal_senders = 4\n" +
		"shared_buffers = 16MB\nmax_connections = 30\n"
	return pg.start(t, data, conf)
}

// startStandby takes a base backup of s (pg_basebackup -R, which writes
// standby.signal and primary_conninfo) and starts it as a hot standby on
// a free port, streaming from s under the application_name name. It
// returns once s's pg_stat_replication shows it streaming. It is stopped
// by its PID when the test ends, before s.
func (s *ownServer) startStandby(t *testing.T, name string) *ownServer {
	t.Helper()
	data := s.pg.dataDir(t, name)
	if out, err := s.pg.command("pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(s.port), "-U", "postgres",
		"-D", data, "-R", "-X", "stream", "--checkpoint=fast", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("pg_basebackup: %v\n%s", err, out)
	}
	// The walreceiver gives the primary cluster_name as its
	// application_name, which synchronous_standby_names names.
	standby := s.pg.start(t, data, fmt.Sprintf("cluster_name = '%s'\nhot_standby = on\n", name))
	s.waitReplication(t, name, "streaming", "")
	return standby
}

// startLogicalReceiver creates the logical replication slot name on s,
// with the plugin test_decoding, and starts pg_recvlogical on it, as a
// change-data-capture tool streams a database's changes. It returns once
// s's pg_stat_replication shows it streaming. It is stopped by its PID
// when the test ends.
func (s *ownServer) startLogicalReceiver(t *testing.T, name string) {
	t.Helper()
	s.exec(t, "SELECT pg_create_logical_replication_slot('"+name+"', 'test_decoding')")
	cmd := s.pg.command("pg_recvlogical", "-h", "127.0.0.1", "-p", strconv.Itoa(s.port), "-U", "postgres", "-d", "postgres",
		"--slot", name, "--start", "-f", "/dev/null")
	cmd.Env = append(os.Environ(), "PGAPPNAME="+name)
	out, err := os.Create(filepath.Join(t.TempDir(), "pg_recvlogical.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting pg_recvlogical: %v", err)
	}
	drivertest.StopAtEnd(t, cmd, syscall.SIGINT, 5*time.Second)
	s.waitReplication(t, name, "streaming", "")
}

// waitReplication waits until s's pg_stat_replication, read by its
// superuser, shows the standby name in state and, unless syncState is
// empty, with that sync_state.
func (s *ownServer) waitReplication(t *testing.T, name, state, syncState string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c := admin(t, s.dsn)
	const q = `SELECT count(*) FROM pg_stat_replication WHERE application_name = $1 AND state = $2 AND ($3 = '' OR sync_state = $3)`
	for {
		var n int
		if err := c.QueryRow(ctx, q, name, state, syncState).Scan(&n); err != nil {
			t.Fatalf("waiting for standby %s (%s %s): %v", name, state, syncState, err)
		}
		if n == 1 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("standby %s is not %s %s after 15s", name, state, syncState)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// dsnAs returns the DSN of role on s's database postgres (trust: no
// password).
func (s *ownServer) dsnAs(role string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres?sslmode=disable", role, s.port)
}

// exec runs the statements stmts on s as its superuser, failing the test
// if one fails.
func (s *ownServer) exec(t *testing.T, stmts ...string) {
	t.Helper()
	c := admin(t, s.dsn)
	for _, q := range stmts {
		if _, err := c.Exec(ctxFor(t, 10*time.Second), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// newPGTools finds PostgreSQL's programs: in $DISTLOCK_PG_BINDIR if set,
// else in PostgreSQL 15's bin dir, where scripts/services.sh installs
// them. As root, they run as the OS user postgres (Debian's packages
// create it), or distlock, which services.sh creates where there is none.
// Without programs or such a user, the test is skipped.
func newPGTools(t *testing.T) pgTools {
	t.Helper()
	bindir := os.Getenv("DISTLOCK_PG_BINDIR")
	if bindir == "" {
		bindir = "/usr/lib/postgresql/15/bin"
	}
	for _, p := range []string{"initdb", "postgres", "pg_basebackup"} {
		if _, err := os.Stat(filepath.Join(bindir, p)); err != nil {
			t.Skipf("no PostgreSQL of the test's own: %v (set DISTLOCK_PG_BINDIR, or run scripts/services.sh up, which installs PostgreSQL 15)", err)
		}
	}
	pg := pgTools{bindir: bindir}
	if os.Geteuid() != 0 {
		return pg
	}
	for _, name := range []string{"postgres", "distlock"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		pg.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		return pg
	}
	t.Skip("no PostgreSQL of the test's own: PostgreSQL refuses root, and there is no OS user postgres or distlock to run it as (run scripts/services.sh up, which makes one)")
	return pg
}

// command returns the command that runs the program name of the bin dir
// with args, as the tools' OS user, from / (the test's dir may be closed
// to that user).
func (pg pgTools) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(pg.bindir, name), args...)
	cmd.Dir = "/"
	if pg.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: pg.cred}
	}
	return cmd
}

// dataDir returns an empty directory name under t.TempDir() that the
// tools' OS user owns, mode 0700 as PostgreSQL wants. The directories
// above it are opened to that user for traversal only.
func (pg pgTools) dataDir(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if pg.cred == nil {
		return dir
	}
	for _, d := range []string{filepath.Dir(dir), filepath.Dir(filepath.Dir(dir))} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(dir, int(pg.cred.Uid), int(pg.cred.Gid)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// start appends conf to data's postgresql.conf, with a free port of
// 127.0.0.1 and no Unix socket, starts the postmaster on it and waits
// until it takes connections. The postmaster is stopped by its PID when
// the test ends.
func (pg pgTools) start(t *testing.T, data, conf string) *ownServer {
	t.Helper()
	_, p, _ := net.SplitHostPort(drivertest.FreeAddr(t))
	port, _ := strconv.Atoi(p)
	conf = fmt.Sprintf("\n# added by the test\nlisten_addresses = '127.0.0.1'\nport = %d\nunix_socket_directories = ''\n%s", port, conf)
	f, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(conf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	logPath := data + ".log"
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := pg.command("postgres", "-D", data)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting postgres: %v", err)
	}
	exited := drivertest.StopAtEnd(t, cmd, syscall.SIGINT, 10*time.Second) // a fast shutdown
	s := &ownServer{port: port, pg: pg}
	s.dsn = s.dsnAs("postgres")
	for deadline := time.Now().Add(15 * time.Second); ; {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := pgx.Connect(ctx, s.dsn)
		cancel()
		if err == nil {
			c.Close(context.Background())
			return s
		}
		select {
		case <-exited:
		case <-time.After(50 * time.Millisecond):
			if time.Now().Before(deadline) {
				continue
			}
		}
		b, _ := os.ReadFile(logPath)
		t.Fatalf("postgres (pid %d) on port %d takes no connections: %v; its log:\n%s", cmd.Process.Pid, port, err, b)
	}
}
