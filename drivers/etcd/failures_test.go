package etcd_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/etcd"
	"github.com/distlock/lock/drivertest"
)

// TestAcquire_hungClusterKeepsTheDeadline stops every member (SIGSTOP) and
// gives acquisitions a 3s deadline, shorter than the request timeout: one
// on a connected client with a lease granted ahead (so its transaction is
// sent, and the core releases after the failure), one on a client that
// must connect first. Both return within 100ms of the deadline. Meanwhile
// a connection closed with an acquisition in flight returns at once, and
// ends that acquisition.
func TestAcquire_hungClusterKeepsTheDeadline(t *testing.T) {
	c := theCluster(t)
	c.healthy(t, 30*time.Second)
	full := dsn(t, "request_timeout", "10s", "dial_timeout", "10s", "member_timeout", "1s")
	connected := open(t, full)
	l, err := connected.Acquire(drivertest.Context(t, 10*time.Second), "warm") // a lease granted ahead
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(drivertest.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	connecting := drivertest.Open(t, "etcd", full)
	cn := drivertest.Connect(t, etcd.Driver{}, full)
	defer cn.Close()
	if _, err := cn.Acquire(drivertest.Context(t, 10*time.Second), "warm-conn", "v0", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	drivertest.HungBackend{
		Connected:  connected,
		Connecting: connecting,
		Conn:       cn,
		Hang:       func(t *testing.T) { drivertest.HangAll(t, c, func(t testing.TB) { c.healthy(t, 30*time.Second) }) },
		TTL:        10 * time.Second,
	}.KeepsDeadlines(t)
}

// TestTryAcquire_silentServerIsUnavailable points a client at a server
// that never answers: see drivertest.SilentServerIsUnavailable.
func TestTryAcquire_silentServerIsUnavailable(t *testing.T) {
	drivertest.SilentServerIsUnavailable(t, "etcd", func(addr string) string {
		return "etcd://" + addr + "?request_timeout=1s&member_timeout=300ms"
	})
}

// TestAcquire_refusedCredentialsAreMisconfigured opens clients on the
// member with authentication with credentials it refuses: Acquire, with
// no deadline, fails at once with an error matching lock.ErrMisconfigured
// that shows no password. The right ones work.
func TestAcquire_refusedCredentialsAreMisconfigured(t *testing.T) {
	u, query := authServer(t)
	password, _ := u.User.Password()
	root := open(t, "etcd://"+u.User.String()+"@"+u.Host+query)
	l, err := root.TryAcquire(drivertest.Context(t, 10*time.Second), "k")
	if err != nil {
		t.Fatalf("TryAcquire as %s: %v", u.User.Username(), err)
	}
	if err := l.Release(drivertest.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	drivertest.RefusedCredentials(t, "etcd", password, [][2]string{
		{"wrong password", "etcd://root:wrong-" + password + "@" + u.Host + query},
		{"unknown user", "etcd://mallory:" + password + "@" + u.Host + query},
		{"user without a role", "etcd://nobody:" + password + "@" + u.Host + query},
		{"no user", "etcd://" + u.Host + query},
	})
}

// authServer returns the URL of the member with authentication, its user
// information included, and a query with a prefix of the test's own.
func authServer(t *testing.T) (*url.URL, string) {
	t.Helper()
	u, err := url.Parse(drivertest.Lookup(t, "DISTLOCK_ETCD_AUTH_DSN"))
	if err != nil {
		t.Fatal(err)
	}
	return u, "?prefix=distlock-test/" + drivertest.RandomHex(4) + "/&member_timeout=500ms&request_timeout=3s"
}

// wrongPasswordClient returns a client of the member with authentication
// whose password is wrong, for Harness.Misconfigured.
func wrongPasswordClient(t *testing.T) *lock.Client {
	u, query := authServer(t)
	password, _ := u.User.Password()
	return drivertest.Open(t, "etcd", "etcd://"+u.User.Username()+":wrong-"+password+"@"+u.Host+query)
}
