//go:build servers

package etcd_test

import (
	"context"
	"fmt"
	"log"
	"net/url"
	"os"
	"strings"

	"github.com/distlock/lock"
	_ "github.com/distlock/lock/drivers/etcd" // registers "etcd"
)

// Acquire and release on the test cluster, then acquire again: the token,
// the key's create revision, grows. The example runs with -tags servers,
// on the cluster of scripts/services.sh, found through
// DISTLOCK_ETCD_ENDPOINTS.
func Example_testCluster() {
	env := os.Getenv("DISTLOCK_ETCD_ENDPOINTS")
	if env == "" {
		log.Fatal("DISTLOCK_ETCD_ENDPOINTS is not set: eval \"$(scripts/services.sh env)\"")
	}
	var hosts []string
	for _, ep := range strings.Split(env, ",") {
		u, err := url.Parse(ep)
		if err != nil {
			log.Fatal(err)
		}
		hosts = append(hosts, u.Host)
	}
	c, err := lock.Open("etcd", "etcd://"+strings.Join(hosts, ",")+"?prefix=example/")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	const key = "invoice:42"

	l, err := c.Acquire(ctx, key)
	if err != nil {
		log.Fatal(err)
	}
	first, ok := l.Token()
	fmt.Println("fenced:", ok)
	if err := l.Release(ctx); err != nil {
		log.Fatal(err)
	}

	next, err := c.Acquire(ctx, key)
	if err != nil {
		log.Fatal(err)
	}
	defer next.Release(ctx)
	tok, _ := next.Token()
	fmt.Println("next token greater:", tok.Newer(first))
	// Output:
	// fenced: true
	// next token greater: true
}
