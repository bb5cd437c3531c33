package drivertest

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// StopAtEnd stops cmd, a server process the test has just started, when
// the test ends: sig to its PID (SIGTERM, or SIGINT for PostgreSQL's fast
// shutdown), then SIGKILL if it has not exited within grace. The channel
// it returns is closed once the process has exited, so that a test
// waiting for the server to answer can tell that it died first. Call it
// once, right after cmd.Start, and never cmd.Wait besides.
func StopAtEnd(t testing.TB, cmd *exec.Cmd, sig syscall.Signal, grace time.Duration) (exited <-chan struct{}) {
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Logf("stopping %s (pid %d): %v", cmd.Path, cmd.Process.Pid, err)
		}
		select {
		case <-done:
		case <-time.After(grace):
			t.Logf("%s (pid %d) still runs %v after %v: killing it", cmd.Path, cmd.Process.Pid, grace, sig)
			cmd.Process.Kill()
			<-done
		}
	})
	return done
}

// FreeAddr returns host:port of 127.0.0.1 where nothing listened a moment
// ago: the kernel's choice, never a standard port. Another process may
// take it before the test's server does; the server then fails to start,
// with its log.
func FreeAddr(t testing.TB) string {
	t.Helper()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		// The kernel may hand a port out again as soon as it is closed:
		// an etcd member once got the same port for its client and its
		// peer URLs (make test: bind: address already in use).
		if _, dup := handedOut.LoadOrStore(addr, true); !dup {
			return addr
		}
	}
	t.Fatal("FreeAddr: 100 ports in a row had been handed out before")
	return ""
}

// handedOut holds the addresses FreeAddr has returned in this process.
var handedOut sync.Map
