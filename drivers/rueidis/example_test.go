package rueidis_test

import (
	"context"
	"log"
	"time"

	"github.com/redis/rueidis"

	"github.com/distlock/lock"
	drivers "github.com/distlock/lock/drivers/rueidis"
)

// Five independent masters: Do holds the lock while the function runs,
// and ends its context if the lock is lost.
func Example() {
	c, err := lock.Open("rueidis", "redis://10.0.0.1:6379,redis://10.0.0.2:6379,redis://10.0.0.3:6379,redis://10.0.0.4:6379,redis://10.0.0.5:6379")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	err = c.Do(context.Background(), "report:daily", func(ctx context.Context) error {
		return nil // ... the work, under ctx
	}, lock.WithTTL(30*time.Second))
	if err != nil {
		log.Fatal(err)
	}
}

// The rueidis clients a program already has, one per master, serve its
// locks too; their commands share the clients' pipelines.
func ExampleNew() {
	var clients []rueidis.Client
	for _, addr := range []string{"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"} {
		client, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}})
		if err != nil {
			log.Fatal(err)
		}
		defer client.Close()
		clients = append(clients, client)
	}
	connector, err := drivers.New(clients)
	if err != nil {
		log.Fatal(err)
	}
	c := lock.OpenConnector(connector)
	defer c.Close()
}
