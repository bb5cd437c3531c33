package valkey_test

import (
	"context"
	"errors"
	"log"

	"github.com/valkey-io/valkey-go"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/redlock"
	drivers "github.com/distlock/lock/drivers/valkey"
)

// Three independent Valkey masters: a lock needs two of them.
// lock.ErrNotAcquired says that another holder has the key, any other
// error that the masters could not be reached.
func Example() {
	c, err := lock.Open("valkey", "redis://10.0.0.1:6379,redis://10.0.0.2:6379,redis://10.0.0.3:6379?fencing=true")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	l, err := c.TryAcquire(ctx, "invoice:42")
	if errors.Is(err, lock.ErrNotAcquired) {
		log.Print("invoice:42 is being handled elsewhere")
		return
	} else if err != nil {
		log.Fatal(err)
	}
	defer l.Release(ctx)
	if token, ok := l.Token(); ok {
		log.Printf("fencing token %v: pass it to the resource, which refuses older ones", token)
	}
}

// A valkey-go client per master, each behind Sentinel, with fencing
// tokens on.
func ExampleNew() {
	clients := make([]valkey.Client, 0, 3)
	for _, master := range []string{"a", "b", "c"} {
		client, err := valkey.NewClient(valkey.ClientOption{
			InitAddress: []string{"10.0.0.9:26379"},
			Sentinel:    valkey.SentinelOption{MasterSet: master},
		})
		if err != nil {
			log.Fatal(err)
		}
		defer client.Close()
		clients = append(clients, client)
	}
	connector, err := drivers.New(clients, redlock.WithFencing(true))
	if err != nil {
		log.Fatal(err)
	}
	c := lock.OpenConnector(connector)
	defer c.Close()
}
