package redisguard_test

import (
	"context"
	"errors"
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/distlock/lock/fencing"
	"github.com/distlock/lock/fencing/redisguard"
)

// A holder of the lock on cart 7 writes the cart through the guard: the
// check of its token and the write are one script call. The cart's key
// carries the resource's hash tag, {cart/7}, so that on Redis Cluster it
// lives in the fence's slot. (It needs a server, so it only compiles.)
func Example() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer rdb.Close()
	g := redisguard.New(rdb, redisguard.Config{})

	var token fencing.Token = 17 // from the lock: lock.Lock.Token
	err := g.HSet(ctx, "cart/7", token, "{cart/7}:cart", "items", "3", "total", "42.00")
	var stale *fencing.StaleError
	switch {
	case errors.As(err, &stale):
		log.Printf("the lock was lost: token %d wrote cart 7 since", stale.Newest)
	case err != nil:
		log.Fatal(err)
	}
}
