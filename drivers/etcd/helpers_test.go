package etcd_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/internal/testenv"
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
	return testenv.EtcdEndpoints(t)
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
	q.Set("prefix", "distlock-test/"+randomHex(4)+"/")
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	return "etcd://" + strings.Join(hosts, ",") + "?" + q.Encode()
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// open opens a client on dsn, connected, and closed when the test ends.
func open(t testing.TB, dsn string) *lock.Client {
	t.Helper()
	c, err := lock.Open("etcd", dsn)
	if err != nil {
		t.Fatalf("lock.Open: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	return c
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
