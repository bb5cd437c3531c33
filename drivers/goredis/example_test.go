package goredis_test

import (
	"context"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/goredis"
	"github.com/distlock/lock/drivers/redlock"
)

// Three independent masters: a lock needs two of them.
func Example() {
	c, err := lock.Open("goredis", "redis://10.0.0.1:6379,redis://10.0.0.2:6379,redis://10.0.0.3:6379?node_timeout=20ms")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	l, err := c.Acquire(ctx, "invoice:42", lock.WithTTL(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer l.Release(ctx)
}

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
