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

// Five masters that run with the delayed restart (or appendfsync always),
// and a program that wants throughput: with quorum_first=true an
// acquisition asks three of the five first, and the other two only if
// those cannot decide, and its release asks only the nodes it asked. The
// lock is then held on a bare quorum: read redlock.WithQuorumFirst first.
func Example_quorumFirst() {
	c, err := lock.Open("goredis", "redis://10.0.0.1:6379,redis://10.0.0.2:6379,redis://10.0.0.3:6379,"+
		"redis://10.0.0.4:6379,redis://10.0.0.5:6379?quorum_first=true")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Do(ctx, "report:daily", func(ctx context.Context) error {
		// ... work that stops when ctx is cancelled: the lock's validity ended
		return nil
	}); err != nil {
		log.Print(err)
	}
}
