package nats_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/nats"
	"github.com/distlock/lock/drivertest"
)

// timeouts are the tests' clients'. An election of a stream's leader
// must fit in the request timeout, and that in the suite's TTL. On the
// test cluster (scripts/natsserver: heartbeats every 100ms, elections
// after 0.5-1s without one) a killed leader's successor takes writes
// within about 0.9s; with nats-server's defaults that takes 4-9s, and these
// would be 12s and 14s.
// The TTL stays under lock.MaxUnavailable (10s), so that a waiter that
// cannot reach a quorum keeps trying until its context ends.
var timeouts = struct{ Attempt, Request, TTL time.Duration }{
	Attempt: 500 * time.Millisecond, Request: 2500 * time.Millisecond, TTL: 3 * time.Second,
}

// server returns the test cluster's DSN, skipping the test without it.
func server(t testing.TB) string {
	t.Helper()
	return drivertest.Lookup(t, "DISTLOCK_NATS_DSN")
}

// freshBucket returns the name of a bucket no other test uses, deleted
// when the test ends.
func freshBucket(t testing.TB) string {
	t.Helper()
	name := "distlock_test_" + drivertest.RandomHex(4)
	full := drivertest.WithParams(server(t), "bucket", name)
	t.Cleanup(func() { dropBucket(t, full) })
	return name
}

// dropBucket deletes the bucket of the DSN full.
func dropBucket(t testing.TB, full string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cn, err := nats.Driver{}.OpenConnector(drivertest.WithParams(full, "create", "false"))
	if err != nil {
		t.Errorf("dropping the bucket: %v", err)
		return
	}
	c, err := cn.Connect(ctx)
	if err != nil {
		return // not there: nothing to drop
	}
	defer c.Close()
	if err := c.(interface{ Drop(context.Context) error }).Drop(ctx); err != nil {
		t.Errorf("dropping the bucket: %v", err)
	}
}

// dsn returns a DSN for the test cluster with the tests' timeouts, a
// bucket of its own, and the parameters kv (name, value, name, value...).
func dsn(t testing.TB, kv ...string) string {
	t.Helper()
	defaults := []string{
		"bucket", freshBucket(t),
		"attempt_timeout", timeouts.Attempt.String(),
		"request_timeout", timeouts.Request.String(),
	}
	return server(t) + "?" + drivertest.Query(append(defaults, kv...)...)
}

// open opens a client on dsn, connected, and closed when the test ends.
func open(t testing.TB, dsn string) *lock.Client {
	t.Helper()
	return drivertest.OpenPinged(t, "nats", dsn)
}

// serverURLs returns the test cluster's servers as nats.go takes them,
// without credentials.
func serverURLs(t testing.TB) string {
	t.Helper()
	full := server(t)
	var urls []string
	for _, h := range strings.Split(full[strings.LastIndexByte(full, '@')+1:], ",") {
		urls = append(urls, "nats://"+h)
	}
	return strings.Join(urls, ",")
}

// bucketOf returns the bucket the DSN full names.
func bucketOf(t testing.TB, full string) string {
	t.Helper()
	u, err := url.Parse(full[:strings.IndexByte(full, '@')] + "@h?" + full[strings.IndexByte(full, '?')+1:])
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("bucket")
}
