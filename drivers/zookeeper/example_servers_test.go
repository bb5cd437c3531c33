//go:build servers

package zookeeper_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/distlock/lock"
	_ "github.com/distlock/lock/drivers/zookeeper" // registers "zookeeper"
)

// Acquire and release on the test ensemble, then acquire again: the
// token, the holder node's creation zxid, grows. A lock of a 5s TTL lives
// in a session of a 5s timeout: if this process vanished, the ensemble
// would free the key 5s later. The example runs with -tags servers, on the
// ensemble of scripts/services.sh, found through
// DISTLOCK_ZOOKEEPER_SERVERS.
func Example_testEnsemble() {
	servers := os.Getenv("DISTLOCK_ZOOKEEPER_SERVERS")
	if servers == "" {
		log.Fatal("DISTLOCK_ZOOKEEPER_SERVERS is not set: eval \"$(scripts/services.sh env)\"")
	}
	c, err := lock.Open("zookeeper", "zk://"+servers+"/distlock-example")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	const key = "invoice:42"

	l, err := c.Acquire(ctx, key, lock.WithTTL(5*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	first, ok := l.Token()
	fmt.Println("fenced:", ok)
	if err := l.Release(ctx); err != nil {
		log.Fatal(err)
	}

	next, err := c.Acquire(ctx, key, lock.WithTTL(5*time.Second))
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
