package nats_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
)

// ownServer is a single nats-server of a test's own, with JetStream.
type ownServer struct {
	url     string // nats://127.0.0.1:port
	monitor string // http://127.0.0.1:port
}

// startServer starts a nats-server of the test's own on 127.0.0.1, with
// JetStream, a monitoring port and extra (nats.conf lines) added to its
// configuration, in a dir under t.TempDir(). The server picks free ports
// and writes them to a ports file there. It is stopped by its PID when the
// test ends. The test is skipped without a nats-server binary (see
// natsServerBinary).
func startServer(t *testing.T, extra string) ownServer {
	t.Helper()
	bin := natsServerBinary(t)
	dir := t.TempDir()
	conf := fmt.Sprintf("listen: \"127.0.0.1:-1\"\nhttp: \"127.0.0.1:-1\"\nports_file_dir: %q\n"+
		"jetstream {\n  store_dir: %q\n}\n%s\n", dir, filepath.Join(dir, "data"), extra)
	if err := os.WriteFile(filepath.Join(dir, "nats.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "nats.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command(bin, "-c", "nats.conf")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	pid := cmd.Process.Pid
	drivertest.StopAtEnd(t, cmd, syscall.SIGTERM, 5*time.Second)
	ports := filepath.Join(dir, fmt.Sprintf("%s_%d.ports", filepath.Base(bin), pid))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var p struct{ Nats, Monitoring []string }
		if b, err := os.ReadFile(ports); err == nil && json.Unmarshal(b, &p) == nil && len(p.Nats) > 0 && len(p.Monitoring) > 0 {
			return ownServer{url: p.Nats[0], monitor: p.Monitoring[0]}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "nats.log"))
			t.Fatalf("nats-server (pid %d) wrote no ports file within 10s; its log:\n%s", pid, b)
		}
	}
}

// natsServerBinary returns the nats-server that scripts/services.sh runs:
// $DISTLOCK_NATS_BIN if set, else the binary of the test cluster's first
// node, else the newest build in the cache dir services.sh builds it into.
// Debian's nats-server (2.9) has no TTLs per key, so it is never taken.
// Without one, the test is skipped.
func natsServerBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("DISTLOCK_NATS_BIN"); bin != "" {
		return bin
	}
	if dir := os.Getenv("DISTLOCK_SERVICES_DIR"); dir != "" {
		if pid, ok := drivertest.ServerPID(filepath.Join(dir, "nats", "node1"), "nats.pid"); ok {
			if bin, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe"); err == nil {
				return bin
			}
		}
	}
	cache := os.Getenv("DISTLOCK_NATS_CACHE")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, _ := os.UserHomeDir()
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "distlock")
	}
	builds, _ := filepath.Glob(filepath.Join(cache, "nats-*", "distlock-nats"))
	slices.SortFunc(builds, func(a, b string) int { return modTime(b).Compare(modTime(a)) })
	if len(builds) == 0 {
		t.Skipf("no nats-server: none in DISTLOCK_NATS_BIN, the test cluster or %s (run scripts/services.sh up)", cache)
	}
	return builds[0]
}

// modTime returns the modification time of the file path, or the zero time.
func modTime(path string) time.Time {
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}
