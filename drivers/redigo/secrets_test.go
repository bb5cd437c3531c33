package redigo_test

import (
	"context"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/distlock/lock/drivers/internal/secrettest"
	"github.com/distlock/lock/drivers/redigo"
	"github.com/distlock/lock/drivers/redlock"
	"github.com/distlock/lock/internal/redistest"
)

// TestSecrets_neverPrinted puts a password in DSNs and pools and checks
// that it shows in nothing the driver and the lock.Client print, return or
// log, whether the nodes answer, refuse the password or cannot be reached.
func TestSecrets_neverPrinted(t *testing.T) {
	addrs := redistest.Servers(t)
	pw := secrettest.Password
	closed := secrettest.ClosedAddr(t)

	// The test servers' default user has no password, so it accepts any.
	accepted := "redis://default:" + pw + "@" + addrs[0] + "?node_timeout=250ms," +
		"redis://default:" + pw + "@" + addrs[1] + "/0?dial_timeout=2s&client_name=secrets," +
		"redis://default:" + pw + "@" + addrs[2] + "?max_idle_conns=2"

	t.Run("printed", func(t *testing.T) {
		sc := secrettest.New(t)
		connector, err := redigo.Driver{}.OpenConnector(accepted)
		sc.Connector("the connector of Driver.OpenConnector", connector, err)

		pools := func(opts ...redis.DialOption) []*redis.Pool {
			var pools []*redis.Pool
			for _, a := range addrs[:3] {
				p := &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
					return redis.DialContext(ctx, "tcp", a, opts...)
				}}
				t.Cleanup(func() { p.Close() })
				pools = append(pools, p)
			}
			return pools
		}
		connector, err = redigo.New(pools(redis.DialUsername("default"), redis.DialPassword(pw)), redlock.WithFencing(true))
		sc.UseConnector("the connector of New, its pools' AUTH accepted", connector, err, secrettest.Answers)
		connector, err = redigo.New(pools(redis.DialPassword(pw)))
		sc.UseConnector("the connector of New, its pools' AUTH refused", connector, err, secrettest.Fails)
	})

	t.Run("accepted", func(t *testing.T) {
		sc := secrettest.New(t)
		sc.Use("a client of lock.Open", sc.Open("redigo", accepted), secrettest.Answers)
	})

	t.Run("malformedDSN", func(t *testing.T) {
		sc := secrettest.New(t)
		a := addrs[0]
		for _, dsn := range append(secrettest.MalformedRedisDSNs(a),
			"redis://u:"+pw+"@"+a+"?skip_verify=true",         // TLS only
			"rediss://u:"+pw+"@"+a+"?skip_verify=maybe",       // a bad flag
			"redis://u:"+pw+"@"+a+"?max_idle_conns=-1",        // a bad number
			"redis://u:"+pw+"@"+a+"?dial_timeout=0s",          // not positive
			"redis://u:"+pw+"@"+a+",redis://v:"+pw+"@"+a+"/1", // the same server twice
		) {
			sc.OpenFails("redigo", dsn)
		}
	})

	t.Run("failing", func(t *testing.T) {
		sc := secrettest.New(t)
		for _, dsn := range []string{
			"redis://u:" + pw + "@" + closed + "?node_timeout=250ms",   // nothing listens
			"redis://u:" + pw + "@" + addrs[0] + "?node_timeout=250ms", // WRONGPASS
			"redis://:" + pw + "@" + addrs[0] + "?node_timeout=250ms",  // AUTH <password> without a password configured
			"redis://" + pw + "@" + addrs[0] + "?node_timeout=250ms",   // the same, as a user alone
		} {
			sc.Use(secrettest.Elide(dsn), sc.Open("redigo", dsn), secrettest.Fails)
		}
	})
}
