// Package bench compares distlock's Redlock drivers with redsync v4 and
// rueidislock on the Redis servers of scripts/services.sh. It is a module
// of its own, so that the library's go.mod never depends on its rivals.
// See README.md.
package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	goredis "github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// go-redis logs every failed dial, and the fault test causes many.
	goredis.SetLogger(quiet{})
	code := exclusive(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// exclusive runs the benchmarks and tests holding the lock that the main
// module's Redis tests take (internal/redistest.Exclusive): no other
// package's tests hang or kill the servers while we measure, and our fault
// test hangs none while others run.
func exclusive(m *testing.M) int {
	dir := os.Getenv("DISTLOCK_SERVICES_DIR")
	if dir == "" {
		return m.Run()
	}
	f, err := os.OpenFile(filepath.Join(dir, "redis-tests.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		fmt.Fprintln(os.Stderr, "bench: flock:", err)
		return 1
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return m.Run()
}

// servers returns the addresses of the test Redis servers, skipping (or
// failing, under CI) without them.
func servers(t testing.TB) []string {
	t.Helper()
	v := os.Getenv("DISTLOCK_REDIS_ADDRS")
	if v == "" {
		msg := "DISTLOCK_REDIS_ADDRS is not set: start the servers with `scripts/services.sh up && eval \"$(scripts/services.sh env)\"` from the repository's root"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	addrs := strings.Split(v, ",")
	if len(addrs) < 5 {
		t.Fatalf("%d Redis servers, want 5", len(addrs))
	}
	return addrs
}
