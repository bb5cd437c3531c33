package redigo

import (
	"context"
	"testing"
	"time"

	"github.com/distlock/lock/drivers/internal/secrettest"
)

// TestSecrets_endpointNeverPrinted checks that an endpoint, whose URL and
// dial options hold the password, and the node made from it, print none
// of it, and that a failed dial does not show it either.
func TestSecrets_endpointNeverPrinted(t *testing.T) {
	sc := secrettest.New(t)
	addr := secrettest.ClosedAddr(t)
	for _, raw := range []string{
		"redis://u:" + secrettest.Password + "@" + addr + "/2?client_name=secrets&dial_timeout=1s",
		"redis://" + secrettest.Password + "@" + addr, // a user alone is the password
		"rediss://u:" + secrettest.Password + "@" + addr + "?skip_verify=true",
	} {
		e, err := parseURL(0, raw)
		if err != nil {
			t.Fatalf("parseURL(%s): %s", secrettest.Elide(raw), secrettest.Elide(err.Error()))
		}
		sc.Printed("an endpoint", e)
		sc.Printed("an endpoint's value", *e)
		n := &node{pool: e.pool(), name: e.addr, dial: e.dialSubscriber, own: true}
		sc.Printed("a node", n)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err = n.Do(ctx, []any{"PING"})
		sc.Err("a node's command to a closed port", err)
		_, err = n.Subscribe(ctx)
		sc.Err("a node's subscription to a closed port", err)
		cancel()
		n.Close()
	}
}
