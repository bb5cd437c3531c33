package zookeeper_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivertest"
	"github.com/distlock/lock/fencing"
)

// pausedHolderEnv, set to a DSN, makes the test binary the paused holder
// of TestPausedHolder_lockTakenAndWriteRefused.
const pausedHolderEnv = "DISTLOCK_ZOOKEEPER_PAUSED_HOLDER"

const (
	pausedKey = "paused-holder"
	pausedTTL = time.Second
)

// TestPausedHolder_lockTakenAndWriteRefused runs a holder in a process of
// its own (this test binary again), stops it with SIGSTOP past its
// session's timeout, and checks that another client takes the lock within
// about a TTL, with a newer token, and that once the holder resumes, its
// write through a fencing guard is refused: the guard, in this process,
// saw the new holder's token first.
func TestPausedHolder_lockTakenAndWriteRefused(t *testing.T) {
	if d := os.Getenv(pausedHolderEnv); d != "" {
		pausedHolder(d)
		return
	}
	theEnsemble(t).healthy(t, 30*time.Second)
	full, _ := dsn(t)
	ctx := drivertest.Context(t, time.Minute)

	cmd := exec.Command(os.Args[0], "-test.run=^TestPausedHolder_lockTakenAndWriteRefused$", "-test.count=1")
	cmd.Env = append(os.Environ(), pausedHolderEnv+"="+full)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		cmd.Wait()
	})
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	read := func(prefix string) string {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the holder's process ended before saying %q", prefix)
				}
				if rest, ok := strings.CutPrefix(l, prefix); ok {
					return rest
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("the holder's process did not say %q within 30s", prefix)
			}
		}
	}
	oldTok, err := strconv.ParseUint(read("holding "), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	guard := fencing.NewMemoryGuard()
	if err := guard.Admit(ctx, "resource", fencing.Token(oldTok)); err != nil {
		t.Fatalf("the guard refused the first holder's token: %v", err)
	}

	other := open(t, full)
	if _, err := other.TryAcquire(ctx, pausedKey); !errors.Is(err, lock.ErrNotAcquired) {
		t.Fatalf("TryAcquire while the holder runs = %v, want ErrNotAcquired", err)
	}
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	l, err := other.Acquire(ctx, pausedKey, lock.WithRetry(lock.FixedDelay(time.Second)))
	if err != nil {
		t.Fatalf("Acquire while the holder is stopped: %v", err)
	}
	defer l.Release(ctx)
	took := time.Since(stopped)
	newTok, _ := l.Token()
	t.Logf("the stopped holder's lock (token %d, TTL %v) was taken %v after SIGSTOP, token %d", oldTok, pausedTTL, took.Round(time.Millisecond), newTok)
	if took > 3*pausedTTL {
		t.Errorf("the stopped holder's lock was taken %v after SIGSTOP; its session's timeout is %v", took, pausedTTL)
	}
	if uint64(newTok) <= oldTok {
		t.Fatalf("the new holder's token %d is not newer than the paused holder's %d", newTok, oldTok)
	}
	if err := guard.Admit(ctx, "resource", newTok); err != nil {
		t.Fatalf("the guard refused the new holder's token: %v", err)
	}

	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(stdin, "write")
	reply := read("write ")
	tokText, state, _ := strings.Cut(reply, " ")
	tok, err := strconv.ParseUint(tokText, 10, 64)
	if err != nil {
		t.Fatalf("the holder's reply %q: %v", reply, err)
	}
	err = guard.Admit(ctx, "resource", fencing.Token(tok))
	if !errors.Is(err, fencing.ErrStale) {
		t.Fatalf("the resumed holder's write with token %d = %v, want an error matching fencing.ErrStale", tok, err)
	}
	t.Logf("the resumed holder's write was refused (%v); its lock said: %s", err, state)
	if !strings.Contains(state, "lost") {
		t.Errorf("the resumed holder's lock says %q: it should know it lost the lock", state)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("the holder's process: %v", err)
	}
}

// pausedHolder is the holder's process: it takes the lock, says its token,
// and waits; once told to write (after its SIGSTOP and SIGCONT), it says
// its token again, with what its lock knows, and releases the lock.
func pausedHolder(dsn string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "paused holder:", err)
		os.Exit(2)
	}
	c, err := lock.Open("zookeeper", dsn)
	if err != nil {
		fail(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := c.Acquire(ctx, pausedKey, lock.WithTTL(pausedTTL))
	if err != nil {
		fail(err)
	}
	stop := l.KeepAlive()
	tok, _ := l.Token()
	fmt.Printf("holding %d\n", tok)
	in := bufio.NewReader(os.Stdin)
	if _, err := in.ReadString('\n'); err != nil && err != io.EOF {
		fail(err)
	}
	state := "valid"
	if err := l.Err(); err != nil {
		state = err.Error()
	}
	fmt.Printf("write %d %s\n", tok, state)
	stop()
	l.Release(ctx)
}
