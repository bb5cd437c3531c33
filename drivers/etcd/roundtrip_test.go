package etcd_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/driver"
	"github.com/distlock/lock/drivers/etcd"
	"github.com/distlock/lock/drivertest"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
)

// rpcs counts the unary requests that a connector's clients send, by
// method.
type rpcs struct {
	mu sync.Mutex
	n  map[string]int
}

func (r *rpcs) option() grpc.DialOption {
	return grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		r.mu.Lock()
		r.n[method]++
		r.mu.Unlock()
		return invoke(ctx, method, req, reply, cc, opts...)
	})
}

// take returns the counts since the last take, leaving out the status
// requests of the search for the leader.
func (r *rpcs) take() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.n
	r.n = make(map[string]int)
	delete(n, "/etcdserverpb.Maintenance/Status")
	return n
}

func (r *rpcs) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fmt.Sprint(r.n)
}

// An uncontended acquisition and release make one request each, a
// transaction: the lease is granted ahead (the first acquisition with a
// TTL waits for one grant), and the key's watch is made only to wait.
func TestRoundTrips_uncontendedAcquireRelease(t *testing.T) {
	r := &rpcs{n: make(map[string]int)}
	connector, err := etcd.Driver{}.OpenConnector(dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	etcd.AddDialOptionsForTest(connector.(*etcd.Connector), r.option())
	c := lock.OpenConnector(connector)
	defer c.Close()
	ctx := drivertest.Context(t, 30*time.Second)
	cycle := func(key string) {
		l, err := c.TryAcquire(ctx, key, lock.WithTTL(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	r.take()
	cycle("rt/first")
	first := r.take()
	if want := map[string]int{"/etcdserverpb.Lease/LeaseGrant": 1, "/etcdserverpb.KV/Txn": 2}; !mapsEqual(first, want) {
		t.Errorf("the first acquisition and release sent %v, want %v", first, want)
	}
	const n = 50
	for i := range n {
		cycle(fmt.Sprintf("rt/%d", i))
	}
	got := r.take()
	// A lease of a minute's TTL serves acquisitions for 6s after its grant:
	// a grant ahead of need, in the background, would show here only on a
	// machine so slow that 50 cycles take 3s.
	delete(got, "/etcdserverpb.Lease/LeaseGrant")
	if want := map[string]int{"/etcdserverpb.KV/Txn": 2 * n}; !mapsEqual(got, want) {
		t.Errorf("%d acquisitions and releases sent %v, want %v: one transaction each", n, got, want)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// leaderOf returns the endpoint of the cluster's leader, waiting for one.
func leaderOf(t *testing.T, eps []string, d time.Duration) string {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	deadline := time.Now().Add(d)
	for {
		for _, ep := range eps {
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			st, err := cli.Status(ctx, ep)
			cancel()
			if err == nil && st.Leader != 0 && st.Header.MemberId == st.Leader {
				return ep
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no leader within %v", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// connectToLeader connects a connector opened by DSN (closed when the test
// ends), and checks that it sends requests to the cluster's leader, which
// it returns.
func connectToLeader(t *testing.T, ctx context.Context, cl *cluster) (driver.Conn, string) {
	t.Helper()
	connector, err := etcd.Driver{}.OpenConnector(dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	cn, err := connector.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cn.Close() })
	leader := leaderOf(t, cl.eps, 10*time.Second)
	if got := etcd.PreferredForTest(cn); "http://"+got != leader && got != leader {
		t.Fatalf("after Connect, requests go to %s; the leader is %s", got, leader)
	}
	return cn, leader
}

// Requests go to the leader, found at Connect and again after an election:
// killing the leader moves them to the new one once a response shows the
// new term.
func TestRoutes_preferTheLeader(t *testing.T) {
	cl := theCluster(t)
	cl.healthy(t, 30*time.Second)
	hosts := func(eps []string) []string {
		out := make([]string, len(eps))
		for i, ep := range eps {
			out[i] = strings.TrimPrefix(ep, "http://")
		}
		return out
	}
	ctx := drivertest.Context(t, time.Minute)
	cn, leader := connectToLeader(t, ctx, cl)
	i := slices.Index(cl.eps, leader)
	cl.Kill(t, i)
	defer cl.Restart(t, i)
	others := slices.Delete(slices.Clone(cl.eps), i, i+1)
	next := leaderOf(t, others, 20*time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for n := 0; ; n++ {
		if _, err := cn.Acquire(ctx, fmt.Sprintf("leader/%d", n), "v"+fmt.Sprint(n), time.Minute); err != nil {
			t.Logf("acquire during the election: %v", err)
		}
		got := etcd.PreferredForTest(cn)
		if "http://"+got == next || got == next {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("10s after the election, requests go to %s; the leader is %s (members %v)", got, next, hosts(cl.eps))
		}
		time.Sleep(20 * time.Millisecond)
		if n%25 == 24 {
			// On a loaded machine the two members may elect again.
			next = leaderOf(t, others, 20*time.Second)
		}
	}
}

// A request that fails over from a hung leader to a follower (the hang
// shorter than an election) moves the preference to that follower; a
// search then moves it back to the leader, with no new term to start one.
func TestRoutes_backToTheLeaderAfterAFailover(t *testing.T) {
	cl := theCluster(t)
	cl.healthy(t, 30*time.Second)
	ctx := drivertest.Context(t, time.Minute)
	cn, leader := connectToLeader(t, ctx, cl)
	isLeader := func(ep string) bool { return "http://"+ep == leader || ep == leader }
	i := slices.Index(cl.eps, leader)
	cl.Hang(t, i)
	resumed := false
	defer func() {
		if !resumed {
			cl.Restart(t, i)
		}
	}()
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := cn.Acquire(ctx, "failover/"+drivertest.RandomHex(4), "v", time.Minute)
		done <- err
	}()
	time.Sleep(timeouts.Member + 200*time.Millisecond) // past the member timeout, short of an election (1s)
	cl.Restart(t, i)
	resumed = true
	if err := <-done; err != nil {
		t.Fatalf("Acquire across the leader's hang: %v", err)
	}
	if took := time.Since(start); took < timeouts.Member {
		t.Fatalf("Acquire took %v, less than the member timeout: it did not fail over, and the test shows nothing", took)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		leader = leaderOf(t, cl.eps, 10*time.Second) // the same one, unless the hang caused an election
		got := etcd.PreferredForTest(cn)
		if isLeader(got) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("5s after a failover, requests go to %s; the leader is %s", got, leader)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
