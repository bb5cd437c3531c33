//go:build unix

package benchmark

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Nodes are redis-server processes of a run's own, on loopback: a run may
// hang them (SIGSTOP) without touching anyone else's servers, and stops
// them by their PIDs when it ends. Its methods are safe for concurrent use.
type Nodes struct {
	addrs []string
	dir   string // the nodes' working directories and logs

	mu      sync.Mutex
	procs   []*exec.Cmd
	exited  []chan struct{} // closed when procs[i] has been reaped
	stopped bool
}

// nodeStartTimeout bounds the wait for a started node to answer PING.
const nodeStartTimeout = 5 * time.Second

// StartNodes starts n redis-server processes of server's (a path, or a
// name looked up in PATH) on 127.0.0.1 without persistence, and waits
// until each answers PING. Their ports are base to base+n-1, or, with base
// 0, free ports the system picks (tried again with fresh ones, up to 3
// times, if another program takes one first). It refuses Redis's standard
// port 6379 and ports already in use. On error it stops the nodes it
// started. The caller must call [Nodes.Stop].
func StartNodes(ctx context.Context, server string, base, n int) (*Nodes, error) {
	path, err := exec.LookPath(server)
	if err != nil {
		return nil, fmt.Errorf("%s not found in PATH (scripts/services.sh up installs it)", server)
	}
	if base != 0 {
		ports := make([]int, n)
		for i := range ports {
			ports[i] = base + i
			if err := portUsable(ports[i]); err != nil {
				return nil, err
			}
		}
		return startNodes(ctx, path, ports)
	}
	for attempt := 1; ; attempt++ {
		ports, err := freePorts(n)
		if err != nil {
			return nil, err
		}
		ns, err := startNodes(ctx, path, ports)
		if err == nil || attempt == freePortAttempts || ctx.Err() != nil {
			return ns, err
		}
	}
}

// freePortAttempts is how many sets of free ports StartNodes tries: a port
// is free when picked, but another program may bind it before the node does.
const freePortAttempts = 3

// freePorts returns n distinct ports of 127.0.0.1 that the system picked
// as free (never Redis's standard 6379). Each is held until all are
// picked, so that none comes twice.
func freePorts(n int) ([]int, error) {
	var ports []int
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port for bench's own nodes: %w", err)
		}
		held = append(held, l)
		if p := l.Addr().(*net.TCPAddr).Port; p != 6379 {
			ports = append(ports, p)
		}
	}
	return ports, nil
}

// startNodes starts a node of path's on each of ports, and waits until
// every one answers.
func startNodes(ctx context.Context, path string, ports []int) (*Nodes, error) {
	dir, err := os.MkdirTemp("", "distlock-bench-redis-")
	if err != nil {
		return nil, err
	}
	ns := &Nodes{dir: dir}
	for _, p := range ports {
		if err := ns.start(path, p); err != nil {
			return nil, errors.Join(err, ns.Stop())
		}
	}
	if err := ns.waitReady(ctx); err != nil {
		return nil, errors.Join(err, ns.Stop())
	}
	return ns, nil
}

// portUsable reports why port cannot serve a node of ours, or nil.
func portUsable(port int) error {
	if port == 6379 || port <= 0 || port > 65535 {
		return fmt.Errorf("port %d is not one for bench's own nodes (never Redis's standard 6379)", port)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("port 127.0.0.1:%d is in use", port)
	}
	return l.Close()
}

// start starts one node on port, in a directory of its own.
func (ns *Nodes) start(path string, port int) error {
	dir := filepath.Join(ns.dir, strconv.Itoa(port))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(dir, "redis.log"))
	if err != nil {
		return err
	}
	defer logf.Close() // the child has its own descriptor
	cmd := exec.Command(path, "--bind", "127.0.0.1", "--port", strconv.Itoa(port),
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = nodeProcAttr()
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server on port %d: %w", port, err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	ns.procs = append(ns.procs, cmd)
	ns.exited = append(ns.exited, exited)
	ns.addrs = append(ns.addrs, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	return nil
}

// waitReady waits until every node answers PING.
func (ns *Nodes) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, nodeStartTimeout)
	defer cancel()
	for i, a := range ns.addrs {
		for !ping(ctx, a) {
			select {
			case <-ns.exited[i]:
				return fmt.Errorf("redis-server on %s exited: %s", a, ns.logTail(i))
			case <-ctx.Done():
				return fmt.Errorf("redis-server on %s did not answer within %v: %s", a, nodeStartTimeout, ns.logTail(i))
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return nil
}

// ping reports whether the Redis server at addr answers PING.
func ping(ctx context.Context, addr string) bool {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && line == "+PONG\r\n"
}

// logTail returns the last line of node i's log.
func (ns *Nodes) logTail(i int) string {
	b, _ := os.ReadFile(filepath.Join(ns.dir, strconv.Itoa(portOf(ns.addrs[i])), "redis.log"))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

func portOf(addr string) int {
	_, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return n
}

// Addrs returns the nodes' addresses (host:port).
func (ns *Nodes) Addrs() []string { return append([]string(nil), ns.addrs...) }

// DSN returns a Redlock DSN over every node.
func (ns *Nodes) DSN() string { return "redis://" + strings.Join(ns.addrs, ",redis://") }

// PIDs returns the nodes' process IDs.
func (ns *Nodes) PIDs() []int {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	pids := make([]int, len(ns.procs))
	for i, p := range ns.procs {
		pids[i] = p.Process.Pid
	}
	return pids
}

// Hang stops node i with SIGSTOP: it keeps its connections, and the
// kernel still accepts new ones, but it answers nothing.
func (ns *Nodes) Hang(i int) error { return ns.signal(i, syscall.SIGSTOP) }

// Resume resumes node i with SIGCONT.
func (ns *Nodes) Resume(i int) error { return ns.signal(i, syscall.SIGCONT) }

func (ns *Nodes) signal(i int, sig syscall.Signal) error {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if ns.stopped {
		return errors.New("nodes are stopped")
	}
	return ns.procs[i].Process.Signal(sig)
}

// nodeStopTimeout is how long Stop waits for a node to exit after SIGTERM
// before it sends SIGKILL.
const nodeStopTimeout = 5 * time.Second

// Stop stops every node, hung or not, by its PID (SIGCONT and SIGTERM,
// then SIGKILL if it has not exited within 5s), waits until each has
// exited, and removes their directory. Stopping stopped nodes does
// nothing.
func (ns *Nodes) Stop() error {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if ns.stopped {
		return nil
	}
	ns.stopped = true
	for _, p := range ns.procs {
		p.Process.Signal(syscall.SIGTERM)
		p.Process.Signal(syscall.SIGCONT)
	}
	var errs []error
	for i, p := range ns.procs {
		select {
		case <-ns.exited[i]:
			continue
		case <-time.After(nodeStopTimeout):
		}
		p.Process.Kill()
		select {
		case <-ns.exited[i]:
		case <-time.After(nodeStopTimeout):
			errs = append(errs, fmt.Errorf("redis-server pid %d (%s) did not exit after SIGKILL", p.Process.Pid, ns.addrs[i]))
		}
	}
	errs = append(errs, os.RemoveAll(ns.dir))
	return errors.Join(errs...)
}
