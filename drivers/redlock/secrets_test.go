package redlock

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"

	"github.com/distlock/lock/drivers/internal/secrettest"
)

// refusingNode is a Node that nothing answers on, as a dial to a closed
// port fails.
type refusingNode struct{ name string }

func (n refusingNode) Do(context.Context, []any) (any, error) { return nil, n.err() }
func (n refusingNode) Subscribe(context.Context) (Subscriber, error) {
	return nil, n.err()
}
func (n refusingNode) String() string { return n.name }
func (n refusingNode) Close() error   { return nil }
func (n refusingNode) err() error {
	return errors.New("dial tcp " + n.name + ": connect: connection refused")
}

// fakeParseURL is a parseURL for NewDSNConnector that makes nodes named
// after the URL's host, with newNode.
func fakeParseURL(newNode func(name string) Node) func(int, string) (func() Node, error) {
	return func(_ int, raw string) (func() Node, error) {
		u, err := url.Parse(raw)
		if err != nil {
			return nil, errors.New("malformed")
		}
		return func() Node { return newNode(u.Host) }, nil
	}
}

// TestSecrets_neverPrinted puts a password in DSNs and checks that it
// shows in nothing the package prints or returns, nor in what a
// lock.Client over its connectors prints, returns or logs, whether the
// nodes answer or refuse.
func TestSecrets_neverPrinted(t *testing.T) {
	pw := secrettest.Password
	dsn := "redis://u:" + pw + "@127.0.0.1:7001/0?node_timeout=200ms,redis://:" + pw + "@127.0.0.1:7002,rediss://" + pw + "@127.0.0.1:7003?fencing=true"
	fake := func(name string) Node { return newFake(name) }
	refusing := func(name string) Node { return refusingNode{name} }

	t.Run("malformedDSN", func(t *testing.T) {
		sc := secrettest.New(t)
		failed := 0
		for _, dsn := range secrettest.MalformedRedisDSNs("127.0.0.1:7001") {
			// Some are refused by the drivers' URL parsers only.
			_, _, err := ParseDSN(dsn)
			sc.MaybeErr("ParseDSN("+secrettest.Elide(dsn)+")", err)
			_, err = NewDSNConnector(dsn, fakeParseURL(fake))
			sc.MaybeErr("NewDSNConnector("+secrettest.Elide(dsn)+")", err)
			if err != nil {
				failed++
			}
		}
		if failed == 0 {
			t.Error("NewDSNConnector accepted every malformed DSN")
		}
	})

	t.Run("printed", func(t *testing.T) {
		sc := secrettest.New(t)
		c, err := NewDSNConnector(dsn, fakeParseURL(fake))
		sc.Connector("the connector of NewDSNConnector", c, err)
		nodes := []Node{newFake("127.0.0.1:7001"), newFake("127.0.0.1:7002"), newFake("127.0.0.1:7003")}
		c, err = NewConnector(nodes, WithKeyPrefix("app:"))
		sc.Connector("the connector of NewConnector", c, err)
		c, err = NewConnectorFunc(func() []Node { return nodes })
		sc.Connector("the connector of NewConnectorFunc", c, err)
		r, err := New(nodes, WithFencing(true))
		if err != nil {
			t.Fatal(err)
		}
		sc.Printed("a *Redlock", r)
	})

	t.Run("used", func(t *testing.T) {
		sc := secrettest.New(t)
		c, err := NewDSNConnector(dsn, fakeParseURL(fake))
		sc.UseConnector("a connector over fake nodes", c, err, secrettest.Answers)
		c, err = NewDSNConnector(dsn, fakeParseURL(refusing))
		sc.UseConnector("a connector over refusing nodes", c, err, secrettest.Fails)
	})
}

// TestString_describesNodesAndParameters checks what connectors and a
// Redlock print: their nodes' addresses and their parameters.
func TestString_describesNodesAndParameters(t *testing.T) {
	pw := secrettest.Password
	fromDSN, err := NewDSNConnector("redis://u:"+pw+"@10.0.0.1:7001/0?node_timeout=20ms, rediss://:"+pw+"@[::1], redis://"+pw+"@node3?fencing=true",
		fakeParseURL(func(name string) Node { return newFake(name) }))
	if err != nil {
		t.Fatal(err)
	}
	nodes := []Node{newFake("10.0.0.1:6379")}
	one, err := NewConnector(nodes, WithKeyPrefix("my app;"))
	if err != nil {
		t.Fatal(err)
	}
	perConn, err := NewConnectorFunc(func() []Node { return nodes }, WithKeyPrefix(""))
	if err != nil {
		t.Fatal(err)
	}
	r, err := New([]Node{newFake("a:1"), newFake("b:2")}, WithFencing(true), WithKeyPrefix("x:"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		v    any
		want string
	}{
		{fromDSN, "redlock(3 nodes: 10.0.0.1:7001, [::1]:6379, node3:6379; node_timeout=20ms fencing=true key_prefix=distlock:)"},
		{one, `redlock(1 node: 10.0.0.1:6379; node_timeout=adaptive fencing=false key_prefix="my app;")`},
		{perConn, `redlock(nodes made at each connection; node_timeout=adaptive fencing=false key_prefix="")`},
		{r, "redlock(2 nodes: a:1, b:2; node_timeout=adaptive fencing=true key_prefix=x:)"},
	} {
		for _, verb := range secrettest.Verbs {
			if got := fmt.Sprintf(verb, tc.v); got != tc.want {
				t.Errorf("%s: got %s, want %s", verb, got, tc.want)
			}
		}
	}
}
