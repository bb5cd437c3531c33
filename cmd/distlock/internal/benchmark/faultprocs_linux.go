package benchmark

import (
	"bytes"
	"context"

	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// serverGoneTimeout bounds the wait for a killed server's process to end
// and its port to close.
const serverGoneTimeout = 10 * time.Second

// serverPID returns the PID in s's pidfile if that process is alive (not
// a zombie) and runs in s.Dir: the server the file names, and not a
// process that reused its PID. Nothing else is ever killed.
func serverPID(s Server) (int, error) {
	b, err := os.ReadFile(s.PIDFile)
	if err != nil {
		return 0, fmt.Errorf("%s is not running: %w", s.Name, err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 1 || pid == os.Getpid() {
		return 0, fmt.Errorf("%s: %s holds no PID", s.Name, s.PIDFile)
	}
	if !alive(pid) {
		return 0, fmt.Errorf("%s is not running (pid %d in %s)", s.Name, pid, s.PIDFile)
	}
	if cwd, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd"); err != nil || cwd != s.Dir {
		return 0, fmt.Errorf("%s: pid %d does not run in %s: not killing it", s.Name, pid, s.Dir)
	}
	return pid, nil
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// killServer kills s with SIGKILL, and waits until its process has ended
// and its port is closed (a process's threads can outlive its main one for
// a moment, with its sockets).
func killServer(s Server) error {
	pid, err := serverPID(s)
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill %s (pid %d): %w", s.Name, pid, err)
	}
	deadline := time.Now().Add(serverGoneTimeout)
	for alive(pid) || listening(s.Addr) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s (pid %d) outlived SIGKILL by %v", s.Name, pid, serverGoneTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// listening reports whether something accepts connections on addr.
func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// startServer runs s's launcher under ctx, in a session of its own, so
// that a terminal's Ctrl-C does not reach the server it starts. It fails
// if s runs already, or if its port is taken.
func startServer(ctx context.Context, s Server) error {
	if _, err := serverPID(s); err == nil {
		return fmt.Errorf("%s is running already", s.Name)
	}
	if listening(s.Addr) {
		return fmt.Errorf("%s is not running, but its address %s is taken: not starting it", s.Name, s.Addr)
	}
	closeOnExec()
	cmd := exec.CommandContext(ctx, s.Start)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("start %s (%s): %w: %s", s.Name, s.Start, err, abridge(string(out)))
	}
	return nil
}

// errNoFaults is nil here: this system can kill servers.
var errNoFaults error

// closeOnExec marks every descriptor of this process from 3 up
// close-on-exec, so that a server started again holds none of them. Go
// opens its own files so, but not those bench inherited from its parent:
// a test's lock file, held by a server for as long as it runs, would keep
// every other test of that server waiting.
func closeOnExec() {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range fds {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
