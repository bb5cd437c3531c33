package goredis_test

import (
	"context"
	"errors"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/goredis"
	"github.com/distlock/lock/drivers/redlock"
)

// Clients you built yourself, here a failover client per master, with
// fencing tokens on.
func ExampleNew() {
	var clients []redis.UniversalClient
	for _, name := range []string{"a", "b", "c"} {
		clients = append(clients, redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName:            name,
			SentinelAddrs:         []string{"10.0.0.9:26379"},
			ContextTimeoutEnabled: true, // lets the per-node timeout bound each request
		}))
	}
	connector, err := goredis.New(clients, redlock.WithFencing(true))
	if err != nil {
		log.Fatal(err)
	}
	c := lock.OpenConnector(connector)
	defer c.Close()
}

// Three independent masters: a lock needs two of them. TryAcquire makes
// one attempt: lock.ErrNotAcquired says that another holder has the key,
// any other error that the masters could not be reached.
func Example() {
	c, err := lock.Open("goredis", "redis://10.0.0.1:6379,redis://10.0.0.2:6379,redis://10.0.0.3:6379?node_timeout=20ms")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	switch l, err := c.TryAcquire(ctx, "invoice:42", lock.WithTTL(10*time.Second)); {
	case errors.Is(err, lock.ErrNotAcquired):
		log.Print("invoice:42 is being handled elsewhere")
	case err != nil:
		log.Fatal(err)
	default:
		defer l.Release(ctx)
		// ...
	}
}
