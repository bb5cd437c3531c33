package goredis

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/distlock/lock/drivers/internal/secrettest"
)

// TestSecrets_nodeNeverPrinted checks that a node, whose client's options
// hold the password, prints none of it, and that a failed dial does not
// show it either.
func TestSecrets_nodeNeverPrinted(t *testing.T) {
	sc := secrettest.New(t)
	addr := secrettest.ClosedAddr(t)
	o, err := clientOptions("redis://u:"+secrettest.Password+"@"+addr+"/2?dial_timeout=1s", nil)
	if err != nil {
		t.Fatalf("clientOptions: %s", secrettest.Elide(err.Error()))
	}
	for _, n := range []*node{
		{c: redis.NewClient(o), own: true},
		{c: redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{addr}, Password: secrettest.Password}), own: true},
		{c: redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "m", SentinelAddrs: []string{addr}, Password: secrettest.Password}), own: true},
	} {
		sc.Printed("a node", n)
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		_, err := n.Do(ctx, []any{"PING"})
		sc.Err("a node's command to a closed port", err)
		cancel()
		n.Close()
	}
}
