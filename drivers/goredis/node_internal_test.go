package goredis

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/distlock/lock/drivers/redlock"
	"github.com/distlock/lock/internal/redistest"
)

// A hung server holds a command no longer than its context allows, and
// the error is one redlock's breaker counts as a timeout
// (redistest.HungNode).
func TestNode_hungServer(t *testing.T) {
	addrs := redistest.Servers(t)
	redistest.HungNode(t, redistest.Redis, func(t *testing.T) redlock.Node {
		o, err := clientOptions("redis://"+addrs[0], nil) // the driver's options
		if err != nil {
			t.Fatal(err)
		}
		n := &node{c: redis.NewClient(o), own: true}
		t.Cleanup(func() { n.Close() })
		return n
	}, nil)
}
