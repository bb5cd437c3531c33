//go:build servers

package postgres_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/distlock/lock"
	_ "github.com/distlock/lock/drivers/postgres" // registers "postgres"
)

// Acquire and release on a PostgreSQL database, then acquire again: the
// token grows. The example runs with -tags servers, on the test servers of
// scripts/services.sh, found through DISTLOCK_POSTGRES_DSN. Its key is its
// own, and it prints only what holds on every run, since the backend keeps
// the key's tokens growing across runs.
func Example_testServers() {
	env := os.Getenv("DISTLOCK_POSTGRES_DSN")
	if env == "" {
		log.Fatal("DISTLOCK_POSTGRES_DSN is not set: eval \"$(scripts/services.sh env)\"")
	}
	c, err := lock.Open("postgres", env)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	const key = "postgres-example/invoice:42"

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
