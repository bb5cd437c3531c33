package drivertest

import (
	"context"
	"fmt"
	"log"

	"github.com/distlock/lock"
)

// TokensGrow is the body of a driver's example on the test servers. It
// opens a client of the driver registered as name on dsn, acquires and
// releases key, then acquires it again, and prints whether the lock was
// fenced with a positive token, and whether the second token is the
// greater:
//
//	fenced: true positive: true
//	next token greater: true
//
// It prints only what holds on every run, since the backend keeps the
// key's tokens growing across runs. Give the key a name of its own. It
// stops the example with log.Fatal if a call fails.
func TokensGrow(name, dsn, key string, opts ...lock.Option) {
	c, err := lock.Open(name, dsn)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	l, err := c.Acquire(ctx, key, opts...)
	if err != nil {
		log.Fatal(err)
	}
	first, ok := l.Token()
	fmt.Println("fenced:", ok, "positive:", first > 0)
	if err := l.Release(ctx); err != nil {
		log.Fatal(err)
	}

	next, err := c.Acquire(ctx, key, opts...)
	if err != nil {
		log.Fatal(err)
	}
	defer next.Release(ctx)
	tok, _ := next.Token()
	fmt.Println("next token greater:", tok.Newer(first))
}
