package goredis_test

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/distlock/lock/drivers/goredis"
	"github.com/distlock/lock/drivers/internal/secrettest"
	"github.com/distlock/lock/drivers/redlock"
	"github.com/distlock/lock/internal/redistest"
)

// printer is a go-redis logger that writes to w.
type printer struct{ w io.Writer }

func (p printer) Printf(_ context.Context, format string, args ...any) {
	fmt.Fprintf(p.w, format+"\n", args...)
}

// TestSecrets_neverPrinted puts a password in DSNs and clients and checks
// that it shows in nothing the driver and the lock.Client print, return or
// log (go-redis's own logger included), whether the nodes answer, refuse
// the password or cannot be reached.
func TestSecrets_neverPrinted(t *testing.T) {
	addrs := redistest.Servers(t)
	pw := secrettest.Password
	closed := secrettest.ClosedAddr(t)
	sc := secrettest.New(t)
	redis.SetLogger(printer{sc.Writer("go-redis's logger")})
	t.Cleanup(func() { redis.SetLogger(quiet{}) })

	// The test servers' default user has no password, so it accepts any.
	accepted := "redis://default:" + pw + "@" + addrs[0] + "?node_timeout=250ms," +
		"redis://default:" + pw + "@" + addrs[1] + "/0?dial_timeout=2s," +
		"redis://:" + pw + "@" + addrs[2] // go-redis ignores a refused AUTH <password>

	t.Run("printed", func(t *testing.T) {
		sc := secrettest.New(t)
		connector, err := goredis.Driver{}.OpenConnector(accepted)
		sc.Connector("the connector of Driver.OpenConnector", connector, err)

		var clients []redis.UniversalClient
		for _, a := range addrs[:3] {
			c := redis.NewClient(&redis.Options{Addr: a, Username: "default", Password: pw, ContextTimeoutEnabled: true})
			t.Cleanup(func() { c.Close() })
			clients = append(clients, c)
		}
		connector, err = goredis.New(clients, redlock.WithFencing(true))
		sc.UseConnector("the connector of New", connector, err, secrettest.Answers)

		careless := redis.NewClient(&redis.Options{Addr: addrs[0], Password: pw})
		defer careless.Close()
		_, err = goredis.New([]redis.UniversalClient{careless})
		sc.Err("New with a client without ContextTimeoutEnabled", err)
	})

	t.Run("accepted", func(t *testing.T) {
		sc := secrettest.New(t)
		sc.Use("a client of lock.Open", sc.Open("goredis", accepted), secrettest.Answers)
	})

	t.Run("malformedDSN", func(t *testing.T) {
		sc := secrettest.New(t)
		for _, dsn := range secrettest.MalformedRedisDSNs(addrs[0]) {
			sc.OpenFails("goredis", dsn)
		}
	})

	t.Run("failing", func(t *testing.T) {
		sc := secrettest.New(t)
		for _, dsn := range []string{
			// Nothing listens. (A pool whose dials failed pool_size times
			// starts a goroutine that redials every second, and outlives
			// the client by up to a second, which goleak would report.)
			"redis://u:" + pw + "@" + closed + "?node_timeout=250ms&pool_size=1000",
			"redis://u:" + pw + "@" + addrs[0] + "?node_timeout=250ms",               // WRONGPASS
			"redis://u:" + pw + "@" + addrs[0] + ",redis://u:" + pw + "@" + addrs[0], // the same node twice
		} {
			cl := sc.Open("goredis", dsn)
			sc.Use(secrettest.Elide(dsn), cl, secrettest.Fails)
		}
	})
}
