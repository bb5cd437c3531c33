package redistest

import (
	"context"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
)

// Settings checks, for the Redlock driver registered as driverName, what
// lock.Client.CheckSettings finds on real servers: on the test servers
// (no persistence, on purpose, for speed) a warning per node and nothing
// else; nothing on a server of the test's own that appends and fsyncs
// every write; and each rule that real servers can break, broken: an
// eviction policy with a maxmemory, a replica, one server given twice by
// two addresses, an fsync every second, a cluster node, an even number of
// nodes and a node that does not answer. Only redis-version is left to
// the redlock package's fakes: no Redis this old (before 2.6.12) runs
// here.
func Settings(t *testing.T, driverName string) {
	addrs := Servers(t)
	t.Run("test servers", func(t *testing.T) {
		got := findings(t, driverName, DSN(addrs, ""))
		var want []string
		for range addrs {
			want = append(want, "warning redis-persistence")
		}
		if !slices.Equal(got, want) {
			t.Errorf("findings %q, want only the expected %q", got, want)
		}
	})
	t.Run("evicting policy", func(t *testing.T) {
		evicting := startRedis(t, "--maxmemory", "64mb", "--maxmemory-policy", "volatile-lru")
		want := []string{"error redis-maxmemory-policy", "warning redis-persistence"}
		if got := findings(t, driverName, DSN([]string{evicting}, "")); !slices.Equal(got, want) {
			t.Errorf("findings %q, want %q", got, want)
		}
	})
	t.Run("replica", func(t *testing.T) {
		master := startRedis(t)
		host, port, _ := net.SplitHostPort(master)
		replica := startRedis(t, "--replicaof", host, port)
		got := findings(t, driverName, DSN([]string{addrs[0], replica, addrs[1]}, ""))
		if !slices.Contains(got, "error redis-replica") {
			t.Errorf("findings %q, want an error redis-replica", got)
		}
	})
	t.Run("append-only, fsync always", func(t *testing.T) {
		safe := startRedis(t, "--appendonly", "yes", "--appendfsync", "always")
		if got := findings(t, driverName, DSN([]string{safe}, "")); len(got) != 0 {
			t.Errorf("findings %q, want none", got)
		}
	})
	t.Run("fsync every second", func(t *testing.T) {
		everysec := startRedis(t, "--appendonly", "yes", "--appendfsync", "everysec")
		want := []string{"warning redis-appendfsync"}
		if got := findings(t, driverName, DSN([]string{everysec}, "")); !slices.Equal(got, want) {
			t.Errorf("findings %q, want %q", got, want)
		}
	})
	t.Run("cluster node", func(t *testing.T) {
		node := startRedis(t, "--cluster-enabled", "yes")
		want := []string{"warning redis-cluster", "warning redis-persistence"}
		if got := findings(t, driverName, DSN([]string{node}, "")); !slices.Equal(got, want) {
			t.Errorf("findings %q, want %q", got, want)
		}
	})
	t.Run("even number of nodes", func(t *testing.T) {
		got := findings(t, driverName, DSN(addrs[:4], ""))
		if !slices.Contains(got, "warning redlock-even-n") {
			t.Errorf("findings %q, want a warning redlock-even-n", got)
		}
	})
	t.Run("node down", func(t *testing.T) {
		down := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t))) // nothing listens there
		got := findings(t, driverName, DSN([]string{addrs[0], addrs[1], down}, ""))
		if !slices.Contains(got, "warning redis-unreachable") {
			t.Errorf("findings %q, want a warning redis-unreachable", got)
		}
	})
	t.Run("same server twice", func(t *testing.T) {
		_, port, _ := net.SplitHostPort(addrs[0])
		got := findings(t, driverName, DSN([]string{addrs[0], addrs[1], "localhost:" + port}, ""))
		if !slices.Contains(got, "error redis-same-server") {
			t.Errorf("findings %q, want an error redis-same-server", got)
		}
	})
}

// findings returns "severity rule" of each finding on dsn, in the order
// CheckSettings gives them (errors first).
func findings(t *testing.T, driverName, dsn string) []string {
	t.Helper()
	c := openDriverClient(t, driverName, dsn)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fs, err := c.CheckSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		t.Log(f)
	}
	return drivertest.Findings(t, fs)
}

// StartServer starts a redis-server of the test's own on 127.0.0.1, on a
// free port, without persistence, with args added (a maxmemory, say),
// stopped when the test ends, and returns its address. It skips the test
// if redis-server is not installed.
func StartServer(t *testing.T, args ...string) string {
	t.Helper()
	return startRedis(t, args...)
}

// startRedis is StartServer.
func startRedis(t *testing.T, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	_, port, _ := net.SplitHostPort(addr)
	runRedis(t, dir, addr, append([]string{"--port", port, "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir}, args...))
	return addr
}

// runRedis runs redis-server with args in dir, stopped when the test ends,
// and waits until it listens on addr. It skips the test if redis-server is
// not installed.
func runRedis(t testing.TB, dir, addr string, args []string) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed: run scripts/services.sh up")
	}
	cmd := exec.Command("redis-server", args...)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s did not listen within 10s", addr)
		}
	}
}
