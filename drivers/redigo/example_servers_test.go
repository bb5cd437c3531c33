//go:build servers

package redigo_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/distlock/lock"
	_ "github.com/distlock/lock/drivers/redigo" // registers "redigo"
)

// Acquire and release on five independent masters, with fencing tokens on
// (fencing=true), then acquire again: the token grows. The example runs with
// -tags servers, on the test servers of scripts/services.sh, found through
// DISTLOCK_REDIS_ADDRS. Its key is its own, and it prints only what holds on
// every run, since the backend keeps the key's tokens growing across runs.
func Example_testServers() {
	env := os.Getenv("DISTLOCK_REDIS_ADDRS")
	if env == "" {
		log.Fatal("DISTLOCK_REDIS_ADDRS is not set: eval \"$(scripts/services.sh env)\"")
	}
	c, err := lock.Open("redigo", "redis://"+strings.ReplaceAll(env, ",", ",redis://")+"?fencing=true")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	const key = "redigo-example/invoice:42"

	l, err := c.Acquire(ctx, key)
	if err != nil {
		log.Fatal(err)
	}
	first, ok := l.Token()
	fmt.Println("fenced:", ok, "positive:", first > 0)
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
	// fenced: true positive: true
	// next token greater: true
}
