package memory_test

import (
	"context"
	"fmt"
	"log"

	"github.com/distlock/lock"
	_ "github.com/distlock/lock/drivers/memory" // registers "memory"
)

// Open a client on a store of the process, acquire a key, read its fencing
// token and release it; the next acquisition of the key gets a greater token.
func Example() {
	c, err := lock.Open("memory", "memory-example") // the DSN names the store
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	l, err := c.Acquire(ctx, "invoice:42")
	if err != nil {
		log.Fatal(err)
	}
	tok, ok := l.Token()
	fmt.Println("holding", l.Key(), "with token", tok, ok)
	if err := l.Release(ctx); err != nil {
		log.Fatal(err)
	}

	next, err := c.Acquire(ctx, "invoice:42")
	if err != nil {
		log.Fatal(err)
	}
	defer next.Release(ctx)
	tok, _ = next.Token()
	fmt.Println("next holder's token", tok)
	// Output:
	// holding invoice:42 with token 1 true
	// next holder's token 2
}
