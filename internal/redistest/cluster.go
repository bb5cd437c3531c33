package redistest

import (
	"fmt"
	"net"
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

// A Redis Cluster hashes every key to one of clusterSlots slots, and a
// node's cluster bus listens on its port + busOffset (Redis's default).
const (
	clusterSlots = 16384
	busOffset    = 10000
)

// clusterNodeTimeout is the nodes' cluster-node-timeout, in milliseconds.
// Nodes ping each other at least every half timeout, which is how they
// learn of each other's roles and slots, and a master that saw itself in
// a minority waits a timeout before it serves again: with 5s, three
// clusters took 3.2-5.6s to start, with 2s 2.2-2.8s (a master serves no
// sooner than 2s after its start, whatever the timeout). A master silent for the
// timeout may be flagged failed, and a cluster without replicas then
// refuses every command for twice the timeout: 2s is far beyond a stall
// of a loaded machine.
const clusterNodeTimeout = "2000"

// clusterWait bounds each wait for the nodes of clusters to agree.
const clusterWait = 30 * time.Second

// ClusterSpec describes a Redis Cluster for [StartClusters].
type ClusterSpec struct {
	// Masters is the number of masters, at least 1. Each serves one range
	// of the slots, the same size for all.
	Masters int

	// Replicas is the number of replicas of each master.
	Replicas int

	// Args are further redis-server arguments for every node, such as
	// "--appendonly", "yes", "--appendfsync", "always". Without them no
	// node keeps its data on disk.
	Args []string
}

// Cluster is a Redis Cluster of a test's own, started by [StartClusters].
// Its slots are split in shards, one per master: shard i is master i's
// range and its replicas. The master of a shard changes with [Cluster.Takeover].
// Its methods are for the test's goroutine.
type Cluster struct {
	spec   ClusterSpec
	shards []*clusterShard
	nodes  []*clusterNode // masters first
}

// clusterShard is a range of slots, the node that serves it and that
// node's replicas.
type clusterShard struct {
	first, last int
	master      *clusterNode
	replicas    []*clusterNode
}

// clusterNode is one redis-server of a Cluster.
type clusterNode struct {
	addr   string
	id     string // its cluster node ID
	dir    string
	cmd    *exec.Cmd
	exited <-chan struct{}
	hung   bool // stopped by Hang
	killed bool
}

// StartCluster is [StartClusters] for one cluster.
func StartCluster(t *testing.T, spec ClusterSpec) *Cluster {
	t.Helper()
	return StartClusters(t, spec)[0]
}

// StartClusters starts a Redis Cluster of the test's own for each spec,
// all at once, from redis-server, and returns them once every node of
// each says cluster_state:ok and agrees on who serves each slot, and
// every replica has synchronized with its master. It skips the test if
// redis-server is not installed, and under -short.
//
// Each node listens on a free port of 127.0.0.1 whose bus port
// (port+10000) was free too, in a folder of t.TempDir. The slots are
// assigned with CLUSTER ADDSLOTSRANGE, the nodes meet with CLUSTER MEET,
// and replicas follow their masters with CLUSTER REPLICATE. A replica
// never fails over by itself: only [Cluster.Takeover] promotes one. The
// nodes are stopped by PID when the test ends.
//
// It first takes drivertest.OwnServers for t, until t ends. So start all
// of a test's clusters in one call: a subtest of a test that holds it
// would wait for ever.
func StartClusters(t *testing.T, specs ...ClusterSpec) []*Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starting Redis Clusters takes seconds: not with -short")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed: run scripts/services.sh up")
	}
	ownServers(t)
	start := time.Now()
	ports := make(map[int]bool) // taken by this start, bus ports included
	clusters := make([]*Cluster, len(specs))
	for i, spec := range specs {
		if spec.Masters < 1 || spec.Replicas < 0 {
			t.Fatalf("redistest: cluster of %d masters and %d replicas each", spec.Masters, spec.Replicas)
		}
		c := &Cluster{spec: spec}
		for range spec.Masters * (1 + spec.Replicas) {
			c.nodes = append(c.nodes, spawnClusterNode(t, spec.Args, ports))
		}
		clusters[i] = c
	}
	for _, c := range clusters {
		for j, n := range c.nodes {
			for try := 1; ; try++ {
				err := n.ready()
				if err == nil {
					break
				}
				if try == 3 {
					t.Fatalf("redistest: cluster node: %v", err)
				}
				t.Logf("redistest: cluster node: %v; trying other ports", err)
				n = spawnClusterNode(t, c.spec.Args, ports)
				c.nodes[j] = n
			}
		}
	}
	// Hung nodes resume before they are stopped (this cleanup runs before
	// StopAtEnd's), so that they obey SIGTERM at once.
	t.Cleanup(func() {
		for _, c := range clusters {
			for _, n := range c.nodes {
				if n.hung {
					n.cmd.Process.Signal(syscall.SIGCONT)
				}
			}
		}
	})
	// Each step runs on every cluster before the next, so that the
	// clusters' waits overlap.
	for _, c := range clusters {
		c.assign(t)
	}
	for _, c := range clusters {
		c.await(t, "every node knows every other", c.met)
	}
	for _, c := range clusters {
		for _, s := range c.shards {
			for _, r := range s.replicas {
				c.must(t, r, "CLUSTER", "REPLICATE", s.master.id)
			}
		}
	}
	for _, c := range clusters {
		c.await(t, "the cluster is ready", c.settled)
	}
	t.Logf("redistest: %d clusters ready in %v", len(clusters), time.Since(start).Round(time.Millisecond))
	return clusters
}

// owners holds the tests that took drivertest.OwnServers through
// ownServers: the lock is a file lock, which a second take by the same
// process would wait for.
var owners sync.Map // testing.TB -> struct{}

// ownServers takes drivertest.OwnServers for t, unless t already has it.
func ownServers(t *testing.T) {
	if _, held := owners.LoadOrStore(t, struct{}{}); held {
		return
	}
	t.Cleanup(func() { owners.Delete(t) })
	drivertest.OwnServers(t)
}

// spawnClusterNode starts a cluster node with args added, on a port that
// is free and whose bus port is free, neither of them in taken, which it
// adds them to. It does not wait for the node: see ready.
func spawnClusterNode(t *testing.T, args []string, taken map[int]bool) *clusterNode {
	t.Helper()
	port := clusterPort(t, taken)
	dir := t.TempDir()
	p := strconv.Itoa(port)
	cmd := exec.Command("redis-server", append([]string{
		"--port", p, "--bind", "127.0.0.1", "--dir", dir, "--logfile", "redis.log",
		"--save", "", "--appendonly", "no",
		"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
		"--cluster-node-timeout", clusterNodeTimeout,
		"--cluster-replica-no-failover", "yes", // only Takeover promotes a replica
		"--cluster-allow-replica-migration", "no",
		"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0", // a replica's first sync at once, not after 5s
	}, args...)...)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatalf("redistest: starting redis-server: %v", err)
	}
	n := &clusterNode{addr: net.JoinHostPort("127.0.0.1", p), dir: dir, cmd: cmd}
	n.exited = drivertest.StopAtEnd(t, cmd, syscall.SIGTERM, 5*time.Second)
	return n
}

// clusterPort returns a free port of 127.0.0.1 whose bus port is free
// too, neither of them in taken, and adds both to taken.
func clusterPort(t *testing.T, taken map[int]bool) int {
	t.Helper()
	for range 100 {
		p := freePort(t)
		bus := p + busOffset
		if bus > 65535 || taken[p] || taken[bus] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(bus)))
		if err != nil {
			continue
		}
		l.Close()
		taken[p], taken[bus] = true, true
		return p
	}
	t.Fatal("redistest: no free port whose bus port (port+10000) is free, in 100 tries")
	return 0
}

// ready waits until n answers PING, which it does only once it listens
// on its bus port too, and reads its node ID. It fails if n exited
// first: another process took one of its ports meanwhile.
func (n *clusterNode) ready() error {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		select {
		case <-n.exited:
			return fmt.Errorf("redis-server on %s exited at its start:\n%s", n.addr, n.logTail())
		default:
		}
		if v, err := n.do("PING"); err == nil && v == "PONG" {
			id, err := n.do("CLUSTER", "MYID")
			if err != nil {
				return fmt.Errorf("%s: CLUSTER MYID: %v", n.addr, err)
			}
			n.id, _ = id.(string)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server on %s did not answer within 10s:\n%s", n.addr, n.logTail())
		}
	}
}

// do runs one command on n, over a connection of its own.
func (n *clusterNode) do(args ...string) (any, error) {
	c, err := dialRESP(n.addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.do(args...)
}

// logTail returns the last lines of n's log.
func (n *clusterNode) logTail() string {
	b, _ := os.ReadFile(filepath.Join(n.dir, "redis.log"))
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-15):], "\n")
}

// running reports whether n was neither killed nor hung.
func (n *clusterNode) running() bool { return !n.killed && !n.hung }

// assign gives each node its config epoch, shares the slots out among
// the masters, one range each, and has each node meet every other.
func (c *Cluster) assign(t *testing.T) {
	t.Helper()
	// Distinct config epochs, as redis-cli --cluster create sets them. All
	// at 0, the nodes would settle them by bumping one another's in the
	// background, and a replica promoted meanwhile could claim its slots
	// with an epoch no higher than its dead master's: the others would
	// keep the slots on the dead master, and fail.
	for i, n := range c.nodes {
		c.must(t, n, "CLUSTER", "SET-CONFIG-EPOCH", strconv.Itoa(i+1))
	}
	m := c.spec.Masters
	for i := range m {
		s := &clusterShard{first: i * clusterSlots / m, last: (i+1)*clusterSlots/m - 1, master: c.nodes[i]}
		for r := range c.spec.Replicas {
			s.replicas = append(s.replicas, c.nodes[m+i*c.spec.Replicas+r])
		}
		c.shards = append(c.shards, s)
		c.must(t, s.master, "CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(s.first), strconv.Itoa(s.last))
	}
	// Every pair meets: gossip alone took 3s to introduce ten nodes.
	for i, n := range c.nodes {
		for _, m := range c.nodes[i+1:] {
			_, port, _ := net.SplitHostPort(m.addr)
			c.must(t, n, "CLUSTER", "MEET", "127.0.0.1", port)
		}
	}
}

// must runs a command on n, and fails the test if n refuses it.
func (c *Cluster) must(t *testing.T, n *clusterNode, args ...string) any {
	t.Helper()
	v, err := n.do(args...)
	if err != nil {
		t.Fatalf("redistest: %s on %s: %v", strings.Join(args, " "), n.addr, err)
	}
	return v
}

// await waits until check, which says what is missing, is satisfied, and
// fails the test with the nodes' logs if it is not within clusterWait.
func (c *Cluster) await(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(clusterWait)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			var logs strings.Builder
			for _, n := range c.nodes {
				fmt.Fprintf(&logs, "--- %s:\n%s\n", n.addr, n.logTail())
			}
			t.Fatalf("redistest: waiting %v until %s: %v\n%s", clusterWait, what, err, logs.String())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// clusterPeer is a line of CLUSTER NODES: one node as another sees it.
type clusterPeer struct {
	id, master string
	flags      []string
	slots      [][2]int
}

func (p clusterPeer) has(flag string) bool { return slices.Contains(p.flags, flag) }

func (p clusterPeer) serves(slot int) bool {
	for _, r := range p.slots {
		if r[0] <= slot && slot <= r[1] {
			return true
		}
	}
	return false
}

// peers returns n's view of the cluster: CLUSTER NODES, parsed.
func (n *clusterNode) peers() ([]clusterPeer, error) {
	v, err := n.do("CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	text, _ := v.(string)
	var peers []clusterPeer
	for line := range strings.SplitSeq(strings.TrimSpace(text), "\n") {
		// id ip:port@cport[,hostname] flags master ping-sent pong-recv epoch link slot...
		f := strings.Fields(line)
		if len(f) < 8 {
			return nil, fmt.Errorf("CLUSTER NODES line %q", line)
		}
		p := clusterPeer{id: f[0], master: f[3], flags: strings.Split(f[2], ",")}
		for _, s := range f[8:] {
			if strings.HasPrefix(s, "[") {
				continue // a slot moving
			}
			lo, hi, _ := strings.Cut(s, "-")
			if hi == "" {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("CLUSTER NODES slots %q", s)
			}
			p.slots = append(p.slots, [2]int{a, b})
		}
		peers = append(peers, p)
	}
	return peers, nil
}

// met reports what keeps the nodes from knowing each other: each must
// list every node, none of them still in its handshake.
func (c *Cluster) met() error {
	for _, n := range c.nodes {
		peers, err := n.peers()
		if err != nil {
			return fmt.Errorf("%s: %v", n.addr, err)
		}
		if len(peers) != len(c.nodes) {
			return fmt.Errorf("%s knows %d nodes of %d", n.addr, len(peers), len(c.nodes))
		}
		for _, p := range peers {
			if p.has("handshake") || p.has("noaddr") {
				return fmt.Errorf("%s sees %s as %v", n.addr, p.id, p.flags)
			}
		}
	}
	return nil
}

// settled reports what keeps the cluster from serving as the test
// expects, on its running nodes: each must say cluster_state:ok and see
// each shard's first slot served by the shard's master, and each replica
// must follow its shard's master, with its link to it up.
func (c *Cluster) settled() error {
	for _, n := range c.nodes {
		if !n.running() {
			continue
		}
		info, err := n.do("CLUSTER", "INFO")
		if err != nil {
			return fmt.Errorf("%s: CLUSTER INFO: %v", n.addr, err)
		}
		if s, _ := info.(string); !strings.Contains(s, "cluster_state:ok") {
			return fmt.Errorf("%s: cluster_state is not ok", n.addr)
		}
		peers, err := n.peers()
		if err != nil {
			return fmt.Errorf("%s: %v", n.addr, err)
		}
		// By ID: a node that met no other does not know its own address.
		byID := make(map[string]clusterPeer, len(peers))
		for _, p := range peers {
			byID[p.id] = p
		}
		for i, s := range c.shards {
			if m := byID[s.master.id]; !m.has("master") || !m.serves(s.first) {
				return fmt.Errorf("%s does not see %s as the master of shard %d (flags %v)", n.addr, s.master.addr, i, m.flags)
			}
			// Only a replica itself is asked whether it follows its master:
			// the others learn it from its pings, every half node timeout.
			if p := byID[n.id]; slices.Contains(s.replicas, n) && (!p.has("slave") || p.master != s.master.id) {
				return fmt.Errorf("%s is not a replica of %s (flags %v)", n.addr, s.master.addr, p.flags)
			}
		}
	}
	for _, s := range c.shards {
		for _, r := range s.replicas {
			if !r.running() {
				continue
			}
			if v, err := r.do("INFO", "replication"); err != nil {
				return fmt.Errorf("%s: INFO replication: %v", r.addr, err)
			} else if text, _ := v.(string); !strings.Contains(text, "master_link_status:up") {
				return fmt.Errorf("%s: its link to its master is not up", r.addr)
			}
		}
	}
	return nil
}

// Addrs returns the addresses of the cluster's nodes that were not
// killed: seeds for a cluster client.
func (c *Cluster) Addrs() []string {
	var addrs []string
	for _, n := range c.nodes {
		if !n.killed {
			addrs = append(addrs, n.addr)
		}
	}
	return addrs
}

// Shards returns the number of shards, which is the number of masters.
func (c *Cluster) Shards() int { return len(c.shards) }

// Master returns the address of the node that serves shard i.
func (c *Cluster) Master(i int) string { return c.shards[i].master.addr }

// Replica returns the address of the first replica of shard i, or ""
// if it has none.
func (c *Cluster) Replica(i int) string {
	if len(c.shards[i].replicas) == 0 {
		return ""
	}
	return c.shards[i].replicas[0].addr
}

// Shard returns the shard whose slots hold key, as CLUSTER KEYSLOT says.
func (c *Cluster) Shard(t *testing.T, key string) int {
	t.Helper()
	n := c.shards[0].master
	for _, m := range c.nodes {
		if m.running() {
			n = m
			break
		}
	}
	slot, ok := c.must(t, n, "CLUSTER", "KEYSLOT", key).(int64)
	if !ok {
		t.Fatalf("redistest: CLUSTER KEYSLOT %q: not an integer", key)
	}
	for i, s := range c.shards {
		if int64(s.first) <= slot && slot <= int64(s.last) {
			return i
		}
	}
	t.Fatalf("redistest: slot %d of %q is in no shard", slot, key)
	return 0
}

// Do runs one command on the node at addr and returns its reply: a
// string, an int64, a []any, nil, or an error for an error reply.
func (c *Cluster) Do(addr string, args ...string) (any, error) {
	return (&clusterNode{addr: addr}).do(args...)
}

// node returns the node at addr.
func (c *Cluster) node(t *testing.T, addr string) *clusterNode {
	t.Helper()
	for _, n := range c.nodes {
		if n.addr == addr {
			return n
		}
	}
	t.Fatalf("redistest: no node %s in the cluster", addr)
	return nil
}

// Hang stops the node at addr with SIGSTOP: it takes connections and
// answers nothing, and the data sent to it waits in its socket.
func (c *Cluster) Hang(t *testing.T, addr string) {
	t.Helper()
	n := c.node(t, addr)
	if err := n.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("redistest: SIGSTOP %s: %v", addr, err)
	}
	n.hung = true
}

// Resume resumes the node at addr after Hang.
func (c *Cluster) Resume(t *testing.T, addr string) {
	t.Helper()
	n := c.node(t, addr)
	if err := n.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatalf("redistest: SIGCONT %s: %v", addr, err)
	}
	n.hung = false
}

// Kill kills the node at addr with SIGKILL, and waits until it is gone.
func (c *Cluster) Kill(t *testing.T, addr string) {
	t.Helper()
	n := c.node(t, addr)
	n.cmd.Process.Signal(syscall.SIGKILL)
	n.cmd.Process.Signal(syscall.SIGCONT) // lets a stopped process die
	select {
	case <-n.exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("redistest: %s still runs 10s after SIGKILL", addr)
	}
	n.killed, n.hung = true, false
}

// Synced waits until each running replica of shard i has received every
// write its master has made so far.
func (c *Cluster) Synced(t *testing.T, i int) {
	t.Helper()
	s := c.shards[i]
	want := c.replOffset(t, s.master, "master_repl_offset")
	c.await(t, fmt.Sprintf("the replicas of shard %d have offset %d", i, want), func() error {
		for _, r := range s.replicas {
			if !r.running() {
				continue
			}
			if got := c.replOffset(t, r, "slave_repl_offset"); got < want {
				return fmt.Errorf("%s is at offset %d", r.addr, got)
			}
		}
		return nil
	})
}

// replOffset returns field of n's INFO replication, a replication offset.
func (c *Cluster) replOffset(t *testing.T, n *clusterNode, field string) int64 {
	t.Helper()
	info, _ := c.must(t, n, "INFO", "replication").(string)
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			off, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("redistest: %s's %s: %q", n.addr, field, v)
			}
			return off
		}
	}
	t.Fatalf("redistest: %s's INFO replication has no %s", n.addr, field)
	return 0
}

// CutReplication closes shard i's master's connections to its replicas
// (CLIENT KILL TYPE replica), and returns how many it closed. A replica
// that is hung cannot connect again, so it misses every write its master
// makes until it resumes; what the master had sent before the cut waits in
// its socket and still arrives.
func (c *Cluster) CutReplication(t *testing.T, i int) int64 {
	t.Helper()
	n, _ := c.must(t, c.shards[i].master, "CLIENT", "KILL", "TYPE", "replica").(int64)
	return n
}

// Takeover promotes the first replica of shard i to its master with
// CLUSTER FAILOVER TAKEOVER, which asks no other node's agreement (the
// master may be dead), and waits until every running node sees it serve
// the shard, and the shard's other replicas follow it. The old master is
// no shard's any more: kill it first.
func (c *Cluster) Takeover(t *testing.T, i int) {
	t.Helper()
	s := c.shards[i]
	if len(s.replicas) == 0 {
		t.Fatalf("redistest: shard %d has no replica to take over", i)
	}
	r := s.replicas[0]
	if !r.running() {
		t.Fatalf("redistest: replica %s is not running", r.addr)
	}
	c.must(t, r, "CLUSTER", "FAILOVER", "TAKEOVER")
	s.master, s.replicas = r, s.replicas[1:] // the others follow r
	c.await(t, fmt.Sprintf("every node sees %s serve shard %d", r.addr, i), c.settled)
}
