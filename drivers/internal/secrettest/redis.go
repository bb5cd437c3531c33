package secrettest

import (
	"testing"

	"github.com/distlock/lock/driver"
)

// RedisDriver checks the Redlock driver registered as name on the test
// servers at addrs (at least three, whose default user has no password):
// with the password in its DSNs, or in the URLs of the clients that
// newConnector makes for its New, no text that the driver and the lock.Client print,
// return or log shows it, whether the nodes answer, refuse the password
// or cannot be reached.
func RedisDriver(t *testing.T, name string, addrs []string, newConnector func(urls []string) (driver.Connector, error)) {
	pw := Password
	closed := ClosedAddr(t)
	accepted := "redis://default:" + pw + "@" + addrs[0] + "?node_timeout=250ms," +
		"redis://default:" + pw + "@" + addrs[1] + "/0?dial_timeout=2s," +
		"redis://default:" + pw + "@" + addrs[2]

	t.Run("printed", func(t *testing.T) {
		sc := New(t)
		var urls []string
		for _, a := range addrs[:3] {
			urls = append(urls, "redis://default:"+pw+"@"+a)
		}
		connector, err := newConnector(urls)
		sc.UseConnector("the connector of New", connector, err, Answers)
	})
	t.Run("accepted", func(t *testing.T) {
		sc := New(t)
		sc.Use("a client of lock.Open", sc.Open(name, accepted), Answers)
	})
	t.Run("malformedDSN", func(t *testing.T) {
		sc := New(t)
		for _, dsn := range MalformedRedisDSNs(addrs[0]) {
			sc.OpenFails(name, dsn)
		}
	})
	t.Run("failing", func(t *testing.T) {
		sc := New(t)
		for _, dsn := range []string{
			"redis://u:" + pw + "@" + closed + "?node_timeout=250ms",                 // nothing listens
			"redis://u:" + pw + "@" + addrs[0] + "?node_timeout=250ms",               // WRONGPASS
			"redis://u:" + pw + "@" + addrs[0] + ",redis://u:" + pw + "@" + addrs[0], // the same node twice
		} {
			sc.Use(Elide(dsn), sc.Open(name, dsn), Fails)
		}
	})
}

// PipelinedRedisDriver is RedisDriver for a driver over a pipelining
// client library (rueidis, valkey-go): clients opens one client per URL,
// and newConnector is the driver's New, given opts.
func PipelinedRedisDriver[C interface{ Close() }, O any](t *testing.T, name string, addrs []string, clients func(urls []string) ([]C, error), newConnector func([]C, ...O) (driver.Connector, error), opts ...O) {
	RedisDriver(t, name, addrs, func(urls []string) (driver.Connector, error) {
		cs, err := clients(urls)
		for _, c := range cs {
			t.Cleanup(c.Close)
		}
		if err != nil {
			t.Fatal(Elide(err.Error()))
		}
		return newConnector(cs, opts...)
	})
}
