package redigo_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/redigo"
	"github.com/distlock/lock/drivers/redlock"
	"github.com/distlock/lock/drivertest"
	"github.com/distlock/lock/internal/redistest"
)

func dialer(addr string) func(context.Context) (redis.Conn, error) {
	return func(ctx context.Context) (redis.Conn, error) {
		return redis.DialContext(ctx, "tcp", addr)
	}
}

func TestNew_refusesBadPools(t *testing.T) {
	p := &redis.Pool{DialContext: dialer("127.0.0.1:7001")}
	q := &redis.Pool{Dial: func() (redis.Conn, error) { return redis.Dial("tcp", "127.0.0.1:7002") }}
	for _, tc := range []struct {
		name  string
		pools []*redis.Pool
		opts  []redlock.Option
		want  string
	}{
		{"none", nil, nil, "no nodes"},
		{"nilPool", []*redis.Pool{p, nil}, nil, "pool 1 is nil"},
		{"samePoolTwice", []*redis.Pool{p, q, p}, nil, "pools 0 and 2 are the same pool"},
		{"noDial", []*redis.Pool{p, {MaxIdle: 1}}, nil, "pool 1 has neither DialContext nor Dial"},
		{"nilOption", []*redis.Pool{p}, []redlock.Option{nil}, "nil Option"},
		{"badTimeout", []*redis.Pool{p}, []redlock.Option{redlock.WithNodeTimeout(0)}, "node timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := redigo.New(tc.pools, tc.opts...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, %v; want an error saying %q", c, err, tc.want)
			}
		})
	}
}

// Pools passed to New serve locks, wake-ups included, and stay open when
// the client is closed.
func TestNew_existingPools(t *testing.T) {
	addrs := redistest.Servers(t)
	var pools []*redis.Pool
	for i, a := range addrs {
		p := &redis.Pool{MaxIdle: 4, DialContext: dialer(a)}
		if i%2 == 1 { // also the plain Dial function, for subscriptions
			p = &redis.Pool{MaxIdle: 4, Dial: func() (redis.Conn, error) { return redis.Dial("tcp", a) }}
		}
		defer p.Close()
		pools = append(pools, p)
	}
	conn, err := redigo.New(pools, redlock.WithNodeTimeout(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	a, b := lock.OpenConnector(conn), lock.OpenConnector(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	drivertest.ReleaseWakes(t, ctx, a, b, "new-existing", 5*time.Second, "the waiter did not wake at the release")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	for i, p := range pools {
		c := p.Get()
		if _, err := c.Do("PING"); err != nil {
			t.Errorf("pool %d after the clients closed: %v", i, err)
		}
		c.Close()
	}
}
