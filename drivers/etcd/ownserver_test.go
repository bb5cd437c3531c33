package etcd_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
)

// startCluster starts an etcd cluster of the test's own: members of the
// binary bin on free ports of 127.0.0.1, with their data under
// t.TempDir(), all at once, and waits until each reports itself healthy
// (the cluster has a leader). The members are stopped by their PIDs when
// the test ends. It returns their client URLs.
func startCluster(t *testing.T, bin string, members int) []string {
	t.Helper()
	dir := t.TempDir()
	clients := make([]string, members)
	peers := make([]string, members)
	initial := make([]string, members)
	token := "distlock-test-" + drivertest.RandomHex(4)
	for i := range members {
		clients[i] = "http://" + drivertest.FreeAddr(t)
		peers[i] = "http://" + drivertest.FreeAddr(t)
		initial[i] = fmt.Sprintf("m%d=%s", i, peers[i])
	}
	for i := range members {
		mdir := filepath.Join(dir, fmt.Sprintf("m%d", i))
		if err := os.Mkdir(mdir, 0o700); err != nil {
			t.Fatal(err)
		}
		log, err := os.Create(filepath.Join(mdir, "etcd.log"))
		if err != nil {
			t.Fatal(err)
		}
		// A short election timeout: a new cluster elects its first
		// leader after one.
		cmd := exec.Command(bin, "--name", fmt.Sprintf("m%d", i), "--data-dir", filepath.Join(mdir, "data"),
			"--listen-client-urls", clients[i], "--advertise-client-urls", clients[i],
			"--listen-peer-urls", peers[i], "--initial-advertise-peer-urls", peers[i],
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", "new",
			"--initial-cluster-token", token,
			"--heartbeat-interval", "50", "--election-timeout", "300")
		cmd.Dir, cmd.Stdout, cmd.Stderr = mdir, log, log
		err = cmd.Start()
		log.Close()
		if err != nil {
			t.Fatalf("starting %s: %v", bin, err)
		}
		drivertest.StopAtEnd(t, cmd, syscall.SIGTERM, 5*time.Second)
	}
	var wg sync.WaitGroup
	errs := make([]error, members)
	for i, u := range clients {
		wg.Go(func() { errs[i] = waitHealthy(u, 20*time.Second) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("m%d", i), "etcd.log"))
			t.Fatalf("etcd member %d (%s) of %s: %v; its log:\n%s", i, clients[i], bin, err, b)
		}
	}
	return clients
}

// waitHealthy polls the member at url's /health until it reports itself
// healthy, or within fails.
func waitHealthy(url string, within time.Duration) error {
	hc := &http.Client{Timeout: time.Second}
	var last string
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := hc.Get(url + "/health")
		if err != nil {
			last = err.Error()
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), `"health":"true"`) {
			return nil
		}
		last = string(b)
	}
	return fmt.Errorf("not healthy within %v (last: %s)", within, last)
}

// etcdCache is the folder scripts/services.sh keeps its etcd builds and
// downloads in.
func etcdCache() string {
	if dir := os.Getenv("DISTLOCK_ETCD_CACHE"); dir != "" {
		return dir
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "distlock")
}

// etcdBinary returns the etcd that scripts/services.sh runs:
// $DISTLOCK_ETCD_BIN if set, else the binary of the test cluster's first
// member, else the newest build in its cache. Without one, the test is
// skipped.
func etcdBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("DISTLOCK_ETCD_BIN"); bin != "" {
		return bin
	}
	if dir := os.Getenv("DISTLOCK_SERVICES_DIR"); dir != "" {
		if pid, ok := drivertest.ServerPID(filepath.Join(dir, "etcd-1"), "etcd.pid"); ok {
			if bin, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe"); err == nil {
				return bin
			}
		}
	}
	return newest(t, filepath.Join(etcdCache(), "etcd-v*", "distlock-etcd"), "no etcd: none in DISTLOCK_ETCD_BIN, the test cluster or %s (run scripts/services.sh build)")
}

// debianEtcdBinary returns Debian's etcd 3.4 (etcd-server in bookworm),
// which scripts/services.sh fetches with apt-get download into its cache
// (etcd34_fetch in services.d/etcd.sh). Without it, the test is skipped.
func debianEtcdBinary(t *testing.T) string {
	t.Helper()
	return newest(t, filepath.Join(etcdCache(), "etcd-debian-*", "usr", "bin", "etcd"), "no etcd 3.4 from Debian in %s (run scripts/services.sh build, which fetches it)")
}

// newest returns the newest file that pattern matches, or skips the test
// with skip, formatted with pattern's folder.
func newest(t *testing.T, pattern, skip string) string {
	t.Helper()
	found, _ := filepath.Glob(pattern)
	slices.SortFunc(found, func(a, b string) int { return modTime(b).Compare(modTime(a)) })
	if len(found) == 0 {
		t.Skipf(skip, etcdCache())
	}
	return found[0]
}

// modTime returns the modification time of the file path, or the zero time.
func modTime(path string) time.Time {
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}
