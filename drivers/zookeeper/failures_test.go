package zookeeper_test

import (
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/zookeeper"
	"github.com/distlock/lock/drivertest"
)

// TestAcquire_hungEnsembleKeepsTheDeadline stops every member (SIGSTOP) and
// gives acquisitions a 3s deadline, shorter than the request timeout: one
// on a connected client (its session granted), one on a client that must
// connect first. Both return within 100ms of the deadline. Meanwhile a
// connection closed with an acquisition in flight returns within its
// bound (about a second: the client's wait for the end of its session).
func TestAcquire_hungEnsembleKeepsTheDeadline(t *testing.T) {
	e := theEnsemble(t)
	e.healthy(t, 30*time.Second)
	full, _ := dsn(t, "request_timeout", "10s", "dial_timeout", "10s", "member_timeout", "1s")
	connected := open(t, full)
	l, err := connected.Acquire(drivertest.Context(t, 10*time.Second), "warm")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(drivertest.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	connecting := drivertest.Open(t, "zookeeper", full)
	cn := drivertest.Connect(t, zookeeper.Driver{}, full)
	defer cn.Close()
	drivertest.HungBackend{
		Connected:  connected,
		Connecting: connecting,
		Conn:       cn,
		Hang:       func(t *testing.T) { drivertest.HangAll(t, e, func(t testing.TB) { e.healthy(t, 30*time.Second) }) },
		TTL:        zookeeper.DefaultSessionTimeout,
		CloseBound: time.Second,
	}.KeepsDeadlines(t)
}

// TestTryAcquire_silentServerIsUnavailable points a client at a server
// that never answers: see drivertest.SilentServerIsUnavailable.
func TestTryAcquire_silentServerIsUnavailable(t *testing.T) {
	drivertest.SilentServerIsUnavailable(t, "zookeeper", func(addr string) string {
		return "zk://" + addr + "/distlock-test?request_timeout=1s&member_timeout=300ms"
	})
}

// TestAcquire_identityTheACLRefusesIsMisconfigured has a digest user make
// a root of its own (its nodes' ACL admits that user alone), and clients
// with other identities use it: Acquire, with no deadline, fails at once
// with an error matching lock.ErrMisconfigured that shows no password.
func TestAcquire_identityTheACLRefusesIsMisconfigured(t *testing.T) {
	r := aclRoot(t)
	drivertest.RefusedCredentials(t, "zookeeper", r.password, [][2]string{
		{"wrong password", r.dsn("app:wrong-" + r.password + "@")},
		{"another user", r.dsn("mallory:" + r.password + "@")},
		{"no user", r.dsn("")},
	})
}

// refusedIdentityClient returns a client whose identity the ACL of its
// root refuses, for Harness.Misconfigured.
func refusedIdentityClient(t *testing.T) *lock.Client {
	r := aclRoot(t)
	return drivertest.Open(t, "zookeeper", r.dsn("mallory:"+r.password+"@"))
}

// acl is a root of its own that only the digest user app may use.
type acl struct {
	password, hosts, root string
}

// dsn returns a DSN of the root with the user information userinfo.
func (r acl) dsn(userinfo string) string {
	return "zk://" + userinfo + r.hosts + r.root + "?request_timeout=2s&member_timeout=500ms"
}

// aclRoot makes a root at the top of the tree (its ACL must not fall on
// other tests' nodes) whose nodes admit the digest user app alone, and
// removes it when the test ends.
func aclRoot(t *testing.T) acl {
	t.Helper()
	theEnsemble(t).healthy(t, 30*time.Second)
	r := acl{
		password: "s3cr3t-pw",
		hosts:    strings.Join(servers(t), ","),
		root:     "/distlock-test-acl-" + drivertest.RandomHex(4),
	}
	owner := open(t, r.dsn("app:"+r.password+"@"))
	l, err := owner.TryAcquire(drivertest.Context(t, 10*time.Second), "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(drivertest.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Remove the root, as the user, once the clients let go.
		authed := rawConn(t)
		if err := authed.AddAuth("digest", []byte("app:"+r.password)); err != nil {
			t.Log(err)
			return
		}
		authed.Delete(r.root+"/k", -1)
		authed.Delete(r.root, -1)
	})
	return r
}
