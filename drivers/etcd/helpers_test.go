package etcd_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivertest"
)

// Timeouts for the tests' clients: an election (about 1-2s on the test
// cluster, whose election timeout is 1s) fits in the request timeout, and
// the request timeout in the suite's TTL, so that a broken majority makes
// attempts fail within it.
const (
	memberTimeout  = 500 * time.Millisecond
	requestTimeout = 3 * time.Second
	suiteTTL       = 4 * time.Second
)

// endpoints returns the test cluster's client URLs, skipping the test
// without them.
func endpoints(t testing.TB) []string {
	t.Helper()
	return drivertest.List(t, "DISTLOCK_ETCD_ENDPOINTS")
}

// dsn returns a DSN for the test cluster with the tests' timeouts, a
// prefix of its own, and the parameters kv (name, value, name, value...).
func dsn(t testing.TB, kv ...string) string {
	t.Helper()
	hosts := make([]string, 0, 3)
	for _, ep := range endpoints(t) {
		u, err := url.Parse(ep)
		if err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, u.Host)
	}
	q := url.Values{}
	q.Set("member_timeout", memberTimeout.String())
	q.Set("request_timeout", requestTimeout.String())
	q.Set("prefix", "distlock-test/"+drivertest.RandomHex(4)+"/")
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	return "etcd://" + strings.Join(hosts, ",") + "?" + q.Encode()
}

// open opens a client on dsn, connected, and closed when the test ends.
func open(t testing.TB, dsn string) *lock.Client {
	t.Helper()
	return drivertest.OpenPinged(t, "etcd", dsn)
}
